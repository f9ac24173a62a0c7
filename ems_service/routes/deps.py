"""Shared route dependencies."""

from __future__ import annotations

from fastapi import Request

from ems_service.errors import NotReady
from ems_service.runtime import Runtime


def runtime(request: Request) -> Runtime:
    rt: Runtime | None = getattr(request.app.state, "runtime", None)
    if rt is None or not rt.ready:
        raise NotReady("the service is starting")
    return rt
