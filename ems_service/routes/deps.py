"""Shared route dependencies."""

from __future__ import annotations

from fastapi import Request

from ems_service.errors import NotReady
from ems_service.runtime import Runtime


async def runtime(request: Request) -> Runtime:
    """The process's runtime (503 while it starts). Async on purpose: FastAPI runs a sync dependency in its
    thread pool, one more thread handoff per request for a lookup that never blocks."""
    rt: Runtime | None = getattr(request.app.state, "runtime", None)
    if rt is None or not rt.ready:
        raise NotReady("the service is starting")
    return rt
