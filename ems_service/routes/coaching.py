"""Coaching routes: stateless POST /v1/coach and live sessions."""

from __future__ import annotations

from fastapi import APIRouter

from coach import Guidance
from condenser import derive_task_id
from condenser.redact import redact_task_and_actions
from ems_service.auth import DOWNGRADE_NOTE
from ems_service.limits import within_limits
from ems_service.repositories import LiveSession
from ems_service.routes.deps import Checked, Coaching, Namespace, Role, Sessions
from ems_service.routes.responses import ModelJSON
from ems_service.schemas import (
    CoachRequest,
    FinishRequest,
    FinishResponse,
    SessionCreate,
    SessionRead,
    StepsAppend,
    StepsResponse,
)

router = APIRouter(prefix="/v1", tags=["coach"])


def _session(record: LiveSession) -> SessionRead:
    return SessionRead(id=record.id, status=record.status, n_steps=record.n_steps, task=record.trajectory["task"],
                       episode_id=record.episode_id, created_at=record.created_at, updated_at=record.updated_at)


@router.post("/coach", response_model=Guidance)
@within_limits
def coach(body: CoachRequest, coaching: Coaching, namespace: Namespace, limits: Checked) -> ModelJSON:
    """Guidance for a partial run (silence unless the risk and the evidence warrant it).

    The `Server-Timing` header splits the time into embed / search / risk / guidance.
    """
    exclude = body.exclude_task_id
    if body.exclude_own_task and exclude is None:
        # derived from the task as it is stored (redacted, as at ingest): an e-mail or a phone number in the task
        # would give the raw text another id, and the run's own episodes would come back as evidence
        exclude = body.trajectory.task_id or derive_task_id(redact_task_and_actions(body.trajectory)[0])
    guidance, timings = coaching.guide(namespace=namespace, run=body.trajectory, k=body.k,
                                       exclude_task_id=exclude, domain=body.domain)
    return ModelJSON(guidance, headers={"Server-Timing": timings.header()})


@router.post("/sessions", status_code=201, response_model=SessionRead)
@within_limits
def start_session(body: SessionCreate, sessions: Sessions, namespace: Namespace, limits: Checked) -> ModelJSON:
    """Start a live run."""
    return ModelJSON(_session(sessions.start(namespace=namespace, run=body)), status_code=201)


@router.get("/sessions/{session_id}", response_model=SessionRead)
@within_limits
def get_session(session_id: str, sessions: Sessions, namespace: Namespace, limits: Checked) -> SessionRead:
    """A session's state."""
    return _session(sessions.get(namespace=namespace, session_id=session_id))


@router.post("/sessions/{session_id}/steps", response_model=StepsResponse)
@within_limits
def append_steps(session_id: str, body: StepsAppend, sessions: Sessions, namespace: Namespace,
                 limits: Checked) -> ModelJSON:
    """Append one or more steps (held to the same limits as a posted run); the guidance is returned inline when
    the coach intervenes."""
    record, guidance = sessions.append(namespace=namespace, session_id=session_id, steps=body.steps)
    return ModelJSON(StepsResponse(session_id=record.id, n_steps=record.n_steps,
                                   guidance=guidance if guidance.intervene else None))


@router.get("/sessions/{session_id}/coaching", response_model=Guidance)
@within_limits
def coaching(session_id: str, sessions: Sessions, namespace: Namespace, limits: Checked) -> ModelJSON:
    """The coaching for the run so far."""
    return ModelJSON(sessions.coaching(namespace=namespace, session_id=session_id))


@router.post("/sessions/{session_id}/finish", response_model=FinishResponse)
@within_limits
def finish(session_id: str, body: FinishRequest, sessions: Sessions, namespace: Namespace, role: Role,
           limits: Checked) -> ModelJSON:
    """Finish the run: it is condensed into an episode (same ingest path, dedup and trust gate), searchable at
    once."""
    record, result = sessions.finish(namespace=namespace, session_id=session_id, outcome=body.outcome, role=role)
    return ModelJSON(FinishResponse(session_id=record.id, episode_id=result.id, deduplicated=result.deduplicated,
                                    label_downgraded=result.label_downgraded,
                                    notes=[DOWNGRADE_NOTE] if result.label_downgraded else []))
