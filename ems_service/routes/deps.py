"""Route dependencies: each route names the services it calls as `Annotated[Service, Depends(...)]` types.

Only this module looks up the process's runtime (the composition root); a route never sees it. The dashboard's
pages (ems_service.ui) take the same types: the composition root gives the dashboard app the same runtime. The
lookups are async on purpose: FastAPI runs a sync dependency in its thread pool, one more thread handoff per
request for a lookup that never blocks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from ems_service.auth import namespace_of, role_of
from ems_service.catalog import Catalog
from ems_service.coaching import CoachingService
from ems_service.errors import NotReady
from ems_service.experience import ExperienceService
from ems_service.ingest import IngestService
from ems_service.keys import KeyRing
from ems_service.lessons import LessonService
from ems_service.limits import Limits
from ems_service.metrics import Metrics
from ems_service.repositories import EventRepository
from ems_service.retrieval import RetrievalService
from ems_service.runtime import Runtime
from ems_service.sessions import SessionService


def _started(request: Request, starting: str) -> Runtime:
    rt: Runtime | None = getattr(request.app.state, "runtime", None)
    if rt is None or not rt.ready:
        raise NotReady(starting)
    return rt


async def runtime(request: Request) -> Runtime:
    """The process's runtime (503 while it starts)."""
    return _started(request, "the service is starting")


@dataclass(frozen=True)
class Readiness:
    """What /readyz checks once the runtime has started: the database answers, and how big each index is."""

    ping: Callable[[], None]
    sizes: Callable[[], dict[str, int]]


async def _readiness(request: Request) -> Readiness:
    rt = _started(request, "indexes are loading")
    return Readiness(ping=rt.db.ping, sizes=rt.vectors.sizes)


_Runtime = Annotated[Runtime, Depends(runtime)]


async def _ingest(rt: _Runtime) -> IngestService:
    return rt.ingest


async def _retrieval(rt: _Runtime) -> RetrievalService:
    return rt.retrieval


async def _catalog(rt: _Runtime) -> Catalog:
    return rt.catalog


async def _coaching(rt: _Runtime) -> CoachingService:
    return rt.coaching


async def _sessions(rt: _Runtime) -> SessionService:
    return rt.sessions


async def _lessons(rt: _Runtime) -> LessonService:
    return rt.lessons


async def _experience(rt: _Runtime) -> ExperienceService:
    return rt.experience


async def _events(rt: _Runtime) -> EventRepository:
    return rt.events


async def _keys(rt: _Runtime) -> KeyRing:
    return rt.keys


async def _limits(rt: _Runtime) -> Limits:
    return rt.limits


async def _metrics(rt: _Runtime) -> Metrics:
    return rt.metrics


Ingest = Annotated[IngestService, Depends(_ingest)]
Retrieval = Annotated[RetrievalService, Depends(_retrieval)]
Episodes = Annotated[Catalog, Depends(_catalog)]
Coaching = Annotated[CoachingService, Depends(_coaching)]
Sessions = Annotated[SessionService, Depends(_sessions)]
Lessons = Annotated[LessonService, Depends(_lessons)]
Experience = Annotated[ExperienceService, Depends(_experience)]
Events = Annotated[EventRepository, Depends(_events)]
Keys = Annotated[KeyRing, Depends(_keys)]
Checked = Annotated[Limits, Depends(_limits)]  # the limits `within_limits` holds the route's input to
Prometheus = Annotated[Metrics, Depends(_metrics)]
Ready = Annotated[Readiness, Depends(_readiness)]
Namespace = Annotated[str, Depends(namespace_of)]
Role = Annotated[str, Depends(role_of)]
