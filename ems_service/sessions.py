"""Live sessions: a run in progress, persisted in the database, coached as steps arrive, finished into an episode."""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, Protocol

from coach import Guidance, PartialRun, advice_key
from condenser import Outcome, Step, Trajectory
from condenser.redact import redact_trajectory
from ems_service.coaching import CoachTimings
from ems_service.config import CoachSettings
from ems_service.errors import Conflict, SessionNotFound
from ems_service.ingest import IngestResult
from ems_service.limits import Limits
from ems_service.repositories import LiveSession, SessionRepository, aware, utcnow

logger = logging.getLogger(__name__)


def _trace_point(n_steps: int, guidance: Guidance) -> dict:
    point: dict[str, Any] = {"n_steps": n_steps, "risk": guidance.failure_risk, "intervene": guidance.intervene}
    if guidance.intervene:
        point |= {"advice": guidance.advice, "signals": guidance.signals}
    return point


class Coaching(Protocol):
    def guide(self, *, namespace: str, run: PartialRun, exclude_task_id: str | None = None,
              recent_advice: list[tuple[int, str]] | None = None) -> tuple[Guidance, CoachTimings]: ...


class Ingest(Protocol):
    def ingest(self, *, namespace: str, trajectories: list[Trajectory], role: str = "admin") -> list[IngestResult]: ...


def risk_trace(record: LiveSession) -> list[dict]:
    """The coach's verdict each time steps arrived: `{n_steps, risk, intervene[, advice, signals]}`, oldest first.
    Kept as it was given (recomputing it later would answer with today's memory, not what the agent was told);
    one point per append, so it is bounded by EMS_LIMITS__MAX_STEPS."""
    return list((record.last_guidance or {}).get("trace", []))


class SessionService:
    """Sessions survive restarts (they live in the database) and expire after an idle TTL.

    The steps handed in are within the limits (the edge checked them); what only the stored run can tell, its
    growing step count and size, is checked here with `limits`."""

    def __init__(self, *, sessions: SessionRepository, coaching: Coaching, ingest: Ingest, limits: Limits,
                 settings: CoachSettings) -> None:
        self.sessions = sessions
        self.advisor = coaching  # objects, not bound methods: tracing wraps their methods after construction
        self.ingest = ingest
        self.limits = limits
        self.settings = settings  # EMS_COACH__SESSION_TTL_S, read when used
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    @contextmanager
    def _locked(self, session_id: str) -> Iterator[None]:
        """Serialize work on one session; the lock is dropped again when the id is unknown."""
        with self._locks_guard:
            lock = self._locks.setdefault(session_id, threading.Lock())
        with lock:
            try:
                yield
            except SessionNotFound:
                self._forget([session_id])
                raise

    @property
    def ttl(self) -> timedelta:
        return timedelta(seconds=self.settings.session_ttl_s)

    def _live(self, record: LiveSession | None, session_id: str) -> LiveSession:
        """The session, unless it is missing or open and idle past the TTL (SessionNotFound, 404)."""
        if record is None or (record.status == "open" and aware(record.updated_at) < utcnow() - self.ttl):
            raise SessionNotFound(f"session {session_id} does not exist in this namespace or has expired")
        return record

    def start(self, *, namespace: str, run: PartialRun) -> LiveSession:
        """Open a session for a run (it may already carry its first steps)."""
        now = utcnow()
        run = redact_trajectory(run)  # a live run is stored too: secrets never reach the sessions table
        record = LiveSession(
            id=str(uuid.uuid4()), namespace=namespace, trajectory=run.model_dump(mode="json", exclude_none=True),
            n_steps=len(run.steps), status="open", advice_log=[], last_guidance=None, episode_id=None,
            created_at=now, updated_at=now,
        )
        self.sessions.create(record)
        return record

    def get(self, *, namespace: str, session_id: str) -> LiveSession:
        return self._live(self.sessions.get(namespace, session_id), session_id)

    def recent(self, *, namespace: str, limit: int) -> list[LiveSession]:
        """The namespace's sessions, most recently active first: open and finished ones, never an open one past
        its idle TTL (`get` would not find it either)."""
        return self.sessions.recent(namespace, active_after=utcnow() - self.ttl, limit=limit)

    def _guide(self, namespace: str, run: PartialRun, advice_log: list) -> tuple[Guidance, CoachTimings]:
        recent = [(int(t), str(k)) for t, k in advice_log]
        return self.advisor.guide(namespace=namespace, run=run, exclude_task_id=run.task_id, recent_advice=recent)

    def append(self, *, namespace: str, session_id: str, steps: list[Step]) -> tuple[LiveSession, Guidance]:
        """Add steps, coach the run so far, remember what was advised (cooldown). The steps are held to the same
        limits as a posted run (every field at the edge; the run's step count and size here, once the stored run
        is known), so a session can always be finished.

        No database connection is held while coaching (the coach reads with its own): a request holding one
        while waiting for another drained the connection pool under load (32 clients: 30 s stalls). The write
        goes through only if nobody appended meanwhile (another replica); else the append is redone.
        """
        with self._locked(session_id):
            for _ in range(5):
                record = self.get(namespace=namespace, session_id=session_id)
                if record.status != "open":
                    self._forget([session_id])
                    raise Conflict(f"session {session_id} is finished; start a new session")
                self.limits.session_steps(record.n_steps + len(steps))
                seen = record.n_steps
                trajectory = dict(record.trajectory)
                advice_log = list(record.advice_log)
                trajectory["steps"] = list(trajectory.get("steps", [])) + [
                    st.model_dump(mode="json", exclude_none=True) for st in steps]
                # redacted as a whole: a password typed now is also scrubbed from the earlier steps
                run = redact_trajectory(PartialRun.model_validate(trajectory))
                trajectory = run.model_dump(mode="json", exclude_none=True)
                self.limits.session_bytes(len(json.dumps(trajectory, ensure_ascii=False).encode("utf-8")))
                n_steps = len(trajectory["steps"])
                guidance, _ = self._guide(namespace, run, advice_log)
                if guidance.intervene:
                    advice_log.append([n_steps, advice_key(guidance)])
                with self.sessions.editing(namespace, session_id) as locked:
                    row = self._live(locked, session_id)
                    if row.n_steps != seen or row.status != "open":
                        continue  # changed meanwhile: redo on the new state
                    row.trajectory, row.n_steps, row.advice_log = trajectory, n_steps, advice_log
                    row.last_guidance = {"n_steps": n_steps, "guidance": guidance.model_dump(mode="json"),
                                         "trace": [*risk_trace(row), _trace_point(n_steps, guidance)]}
                    row.updated_at = utcnow()
                return row, guidance
            raise Conflict(f"session {session_id} kept changing while steps were appended; retry")

    def coaching(self, *, namespace: str, session_id: str) -> Guidance:
        """The guidance for the run so far (computed when steps arrived, or now)."""
        record = self.get(namespace=namespace, session_id=session_id)
        last = record.last_guidance
        if last and last.get("n_steps") == record.n_steps:
            return Guidance.model_validate(last["guidance"])
        guidance, _ = self._guide(namespace, PartialRun.model_validate(record.trajectory), record.advice_log)
        return guidance

    def finish(self, *, namespace: str, session_id: str, outcome: Outcome,
               role: str = "admin") -> tuple[LiveSession, IngestResult]:
        """Condense the finished run into an episode through the normal ingest path (dedup, limits, and the
        trust gate: a writer's verified claim is stored as an unverified self-report)."""
        with self._locked(session_id):
            record = self.get(namespace=namespace, session_id=session_id)
            if record.status == "finished":
                self._forget([session_id])
                raise Conflict(f"session {session_id} is already finished as episode {record.episode_id}")
            data = dict(record.trajectory) | {"outcome": outcome.model_dump(mode="json")}
            if not data.get("steps"):
                raise Conflict("a session without steps cannot be finished into an episode")
            result = self.ingest.ingest(namespace=namespace, trajectories=[Trajectory.model_validate(data)],
                                        role=role)[0]
            if result.error:
                raise result.error
            with self.sessions.editing(namespace, session_id) as locked:
                row = self._live(locked, session_id)
                row.status, row.episode_id, row.updated_at = "finished", result.id, utcnow()
                record = row
        self._forget([session_id])  # a finished session only answers 409 from now on: no lock needed
        return record, result

    def _forget(self, session_ids: list[str]) -> None:
        """Drop the per-session locks of finished or expired sessions (the dict would otherwise only grow)."""
        with self._locks_guard:
            for session_id in session_ids:
                self._locks.pop(session_id, None)

    def expire(self) -> int:
        """Delete sessions idle for longer than the TTL; returns how many."""
        gone, n = self.sessions.delete_idle(idle_before=utcnow() - self.ttl)
        self._forget(gone)
        if n:
            logger.info("sessions expired: %d", n)
        return n
