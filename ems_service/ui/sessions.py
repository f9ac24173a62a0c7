"""Dashboard pages over live sessions: the runs in progress, each with its risk over steps and the guidance the
coach gave as steps arrived."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from coach import Guidance
from ems_service.routes.deps import Checked, Sessions
from ems_service.sessions import risk_trace
from ems_service.ui.chart import risk_chart
from ems_service.ui.login import Who
from ems_service.ui.render import page

router = APIRouter(prefix="/ui")
LISTED = 50


@router.get("/sessions", response_class=HTMLResponse)
def sessions(request: Request, sessions: Sessions, who: Who) -> HTMLResponse:
    """The namespace's latest sessions, open and finished."""
    rows = [(r, risk_trace(r)) for r in sessions.recent(namespace=who.namespace, limit=LISTED)]
    return page(request, "sessions.html", viewer=who, active="sessions", rows=rows, listed=LISTED)


@router.get("/sessions/{session_id}", response_class=HTMLResponse)
def session(request: Request, session_id: str, sessions: Sessions, limits: Checked, who: Who) -> HTMLResponse:
    """One session (GET /v1/sessions/{id}): its steps, the risk chart, the guidance given and the latest one."""
    limits.check(session_id=session_id)
    record = sessions.get(namespace=who.namespace, session_id=session_id)
    trace = risk_trace(record)
    last = (record.last_guidance or {}).get("guidance")
    coach = sessions.settings  # EMS_COACH__*: the moderate and high risk lines
    return page(request, "session.html", viewer=who, active="sessions", s=record, trace=trace,
                steps=record.trajectory.get("steps", []), task=record.trajectory.get("task", ""),
                chart=risk_chart(trace, moderate=coach.moderate_risk, high=coach.high_risk),
                latest=Guidance.model_validate(last) if last else None)
