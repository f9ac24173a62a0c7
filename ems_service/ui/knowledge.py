"""Dashboard pages over what memory has distilled: lessons (tier 1 and tier 2) and experience tiers per site."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ems_service.routes.deps import Checked, Experience, Lessons
from ems_service.ui.login import Who
from ems_service.ui.render import page

router = APIRouter(prefix="/ui")


@router.get("/lessons", response_class=HTMLResponse)
def lessons(request: Request, lessons: Lessons, who: Who) -> HTMLResponse:
    """Every lesson of the namespace (GET /v1/lessons), marked when it is in the tier-1 set agents load."""
    rows = lessons.list(who.namespace)
    tier1 = {r.id for r in lessons.tier1(who.namespace, record=False)}
    return page(request, "lessons.html", viewer=who, active="lessons", rows=rows, tier1=tier1)


@router.get("/experience", response_class=HTMLResponse)
def experience(request: Request, experience: Experience, limits: Checked, who: Who, url: str = "",
               intent: str = "") -> HTMLResponse:
    """The replay tier (P1..P5) for a url and intent (GET /v1/experience)."""
    result = None
    if url.strip():
        limits.check(url=url, intent=intent or None)
        result = experience.experience(who.namespace, url=url.strip(), intent=intent.strip() or None)
    return page(request, "experience.html", viewer=who, active="experience", url=url, intent=intent, result=result)
