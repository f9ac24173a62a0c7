"""Health, readiness and stats."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from ems_service.auth import namespace_of
from ems_service.errors import NotReady
from ems_service.routes.deps import runtime
from ems_service.runtime import Runtime

router = APIRouter()


@router.get("/healthz", tags=["system"])
def healthz() -> dict:
    """The process is alive."""
    return {"status": "ok"}


@router.get("/readyz", tags=["system"])
def readyz(request: Request) -> dict:
    """The database answers and the indexes are loaded."""
    rt: Runtime | None = getattr(request.app.state, "runtime", None)
    if rt is None or not rt.ready:
        raise NotReady("indexes are loading")
    rt.store.ping()
    return {"status": "ready", "indexes": rt.vectors.sizes()}


@router.get("/v1/stats", tags=["system"])
def stats(rt: Runtime = Depends(runtime), namespace: str = Depends(namespace_of)) -> dict:
    """Counts for the caller's namespace: episodes, outcomes, dedups, evictions, index size."""
    return rt.memory.stats(namespace=namespace)
