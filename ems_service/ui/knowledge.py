"""Dashboard pages over what memory has distilled: lessons (tier 1 and tier 2) and experience tiers per site."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from ems_service.runtime import Runtime
from ems_service.ui.login import Viewer, runtime, viewer
from ems_service.ui.render import page

router = APIRouter(prefix="/ui")


@router.get("/lessons", response_class=HTMLResponse)
def lessons(request: Request, rt: Runtime = Depends(runtime), who: Viewer = Depends(viewer)) -> HTMLResponse:
    """Every lesson of the namespace (GET /v1/lessons), marked when it is in the tier-1 set agents load."""
    rows = rt.lessons.list(who.namespace)
    tier1 = {r.id for r in rt.lessons.tier1(who.namespace, record=False)}
    return page(request, "lessons.html", viewer=who, active="lessons", rows=rows, tier1=tier1)


@router.get("/experience", response_class=HTMLResponse)
def experience(request: Request, url: str = "", intent: str = "", rt: Runtime = Depends(runtime),
               who: Viewer = Depends(viewer)) -> HTMLResponse:
    """The replay tier (P1..P5) for a url and intent (GET /v1/experience)."""
    result = None
    if url.strip():
        rt.limits.check(url=url, intent=intent or None)
        result = rt.experience.experience(who.namespace, url=url.strip(), intent=intent.strip() or None)
    return page(request, "experience.html", viewer=who, active="experience", url=url, intent=intent, result=result)
