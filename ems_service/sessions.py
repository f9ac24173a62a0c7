"""Live sessions: a run in progress, persisted in the database, coached as steps arrive, finished into an episode."""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, or_, select

from coach import Guidance, PartialRun, advice_key
from condenser import Outcome, Step, Trajectory
from condenser.redact import redact_trajectory
from ems_service.coaching import CoachService, CoachTimings
from ems_service.errors import Conflict, SessionNotFound
from ems_service.limits import Limits
from ems_service.service import IngestResult, MemoryService
from ems_service.store import aware, utcnow
from ems_service.tables import SessionRecord

logger = logging.getLogger(__name__)


def _trace_point(n_steps: int, guidance: Guidance) -> dict:
    point: dict[str, Any] = {"n_steps": n_steps, "risk": guidance.failure_risk, "intervene": guidance.intervene}
    if guidance.intervene:
        point |= {"advice": guidance.advice, "signals": guidance.signals}
    return point


def risk_trace(record: SessionRecord) -> list[dict]:
    """The coach's verdict each time steps arrived: `{n_steps, risk, intervene[, advice, signals]}`, oldest first.
    Kept as it was given (recomputing it later would answer with today's memory, not what the agent was told);
    one point per append, so it is bounded by EMS_LIMITS__MAX_STEPS."""
    return list((record.last_guidance or {}).get("trace", []))


class SessionService:
    """Sessions survive restarts (they live in the database) and expire after an idle TTL.

    The steps handed in are within the limits (the edge checked them); what only the stored run can tell, its
    growing step count and size, is checked here with `limits`."""

    def __init__(self, *, memory: MemoryService, coach: CoachService, limits: Limits) -> None:
        self.memory = memory
        self.coach = coach
        self.limits = limits
        self.store = memory.store
        self.settings = memory.settings
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

    def _load(self, s, namespace: str, session_id: str, *, for_update: bool = False) -> SessionRecord:  # noqa: ANN001
        q = select(SessionRecord).where(SessionRecord.id == session_id, SessionRecord.namespace == namespace)
        record = s.scalar(q.with_for_update() if for_update else q)
        ttl = timedelta(seconds=self.settings.coach.session_ttl_s)
        if record is None or (record.status == "open" and aware(record.updated_at) < utcnow() - ttl):
            raise SessionNotFound(f"session {session_id} does not exist in this namespace or has expired")
        return record

    def start(self, *, namespace: str, run: PartialRun) -> SessionRecord:
        """Open a session for a run (it may already carry its first steps)."""
        now = utcnow()
        run = redact_trajectory(run)  # a live run is stored too: secrets never reach the sessions table
        record = SessionRecord(
            id=str(uuid.uuid4()), namespace=namespace, trajectory=run.model_dump(mode="json", exclude_none=True),
            n_steps=len(run.steps), status="open", advice_log=[], last_guidance=None, created_at=now, updated_at=now,
        )
        with self.store.session() as s:
            s.add(record)
        return record

    def get(self, *, namespace: str, session_id: str) -> SessionRecord:
        with self.store.session() as s:
            return self._load(s, namespace, session_id)

    def recent(self, *, namespace: str, limit: int) -> list[SessionRecord]:
        """The namespace's sessions, most recently active first: open and finished ones, never an open one past
        its idle TTL (`get` would not find it either)."""
        cutoff = utcnow() - timedelta(seconds=self.settings.coach.session_ttl_s)
        with self.store.session() as s:
            return list(s.scalars(
                select(SessionRecord)
                .where(SessionRecord.namespace == namespace,
                       or_(SessionRecord.status != "open", SessionRecord.updated_at >= cutoff))
                .order_by(SessionRecord.updated_at.desc(), SessionRecord.id).limit(limit)))

    def _guide(self, namespace: str, run: PartialRun, advice_log: list) -> tuple[Guidance, CoachTimings]:
        recent = [(int(t), str(k)) for t, k in advice_log]
        return self.coach.coach(namespace=namespace, run=run, exclude_task_id=run.task_id, recent_advice=recent)

    def append(self, *, namespace: str, session_id: str, steps: list[Step]) -> tuple[SessionRecord, Guidance]:
        """Add steps, coach the run so far, remember what was advised (cooldown). The steps are held to the same
        limits as a posted run (every field at the edge; the run's step count and size here, once the stored run
        is known), so a session can always be finished.

        No database connection is held while coaching (the coach reads with its own): a request holding one
        while waiting for another drained the connection pool under load (32 clients: 30 s stalls). The write
        goes through only if nobody appended meanwhile (another replica); else the append is redone.
        """
        with self._locked(session_id):
            for _ in range(5):
                with self.store.session() as s:
                    record = self._load(s, namespace, session_id)
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
                with self.store.session() as s:
                    row = self._load(s, namespace, session_id, for_update=True)
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
               role: str = "admin") -> tuple[SessionRecord, IngestResult]:
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
            result = self.memory.ingest(namespace=namespace, trajectories=[Trajectory.model_validate(data)],
                                        role=role)[0]
            if result.error:
                raise result.error
            with self.store.session() as s:
                row = self._load(s, namespace, session_id, for_update=True)
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
        cutoff = utcnow() - timedelta(seconds=self.settings.coach.session_ttl_s)
        with self.store.session() as s:
            gone = list(s.scalars(select(SessionRecord.id).where(SessionRecord.updated_at < cutoff)))
            n = 0
            if gone:
                n = s.execute(delete(SessionRecord).where(SessionRecord.id.in_(gone))).rowcount or 0  # type: ignore[attr-defined]  # a DELETE gives a CursorResult
        self._forget(gone)
        if n:
            logger.info("sessions expired: %d", n)
        return n
