"""Health, readiness and stats."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import PlainTextResponse

from ems_service.auth import require_admin
from ems_service.routes.deps import Episodes, Namespace, Prometheus, Ready

router = APIRouter()


@router.get("/healthz", tags=["system"])
def healthz() -> dict:
    """The process is alive."""
    return {"status": "ok"}


@router.get("/readyz", tags=["system"])
def readyz(request: Request, ready: Ready) -> dict:
    """The database answers and the indexes are loaded: `{status}` for anyone (no key needed); an admin key (or
    embedded mode) also gets `indexes`, the size of every namespace's index, which no tenant may see."""
    ready.ping()
    if request.scope.get("state", {}).get("role") != "admin":
        return {"status": "ready"}
    return {"status": "ready", "indexes": ready.sizes()}


@router.get("/v1/stats", tags=["system"])
def stats(episodes: Episodes, namespace: Namespace) -> dict:
    """Counts for the caller's namespace: episodes, outcomes, dedups, evictions, index size."""
    return episodes.stats(namespace=namespace)


@router.get("/metrics", tags=["system"], dependencies=[Depends(require_admin)], response_class=PlainTextResponse,
            responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text format"}})
def metrics(metrics: Prometheus) -> Response:
    """Prometheus metrics (an admin key once keys exist: they count every namespace)."""
    from ems_service.metrics import CONTENT_TYPE

    return Response(metrics.render(), media_type=CONTENT_TYPE)
