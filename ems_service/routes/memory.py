"""Lessons, experience, facts, relabelling and memory events."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from fastapi import APIRouter, Depends, Query
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from condenser.models import reject_nul
from ems_service.auth import namespace_of
from ems_service.errors import BadRequest, LimitExceeded
from ems_service.routes.deps import runtime
from ems_service.runtime import Runtime
from ems_service.schemas import EpisodeRead, RowId, UtcDatetime
from ems_service.tables import LessonRecord

router = APIRouter(prefix="/v1", tags=["memory"])


class Lesson(BaseModel):
    id: int
    lesson: str
    category: str
    failed_command: str | None
    error_pattern: str | None
    domain: str | None
    use_count: int
    created_at: UtcDatetime
    last_used: UtcDatetime
    source: str
    triggered_domains: list[str]

    @classmethod
    def of(cls, r: LessonRecord) -> Lesson:
        return cls(**{k: getattr(r, k) for k in cls.model_fields})


class LessonList(BaseModel):
    lessons: list[Lesson]


class LessonCreate(BaseModel):
    _no_nul = model_validator(mode="before")(reject_nul)
    lesson: str = Field(min_length=3, max_length=2000)
    category: Literal["tool_fallback", "best_practice", "error_recovery", "site_specific"] = "site_specific"
    domain: str | None = None
    failed_command: str | None = None
    error: str | None = None


class RecallRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str | None = Field(None, min_length=1, max_length=2000)
    error: str | None = Field(None, max_length=20000)
    domain: str | None = Field(None, min_length=1, max_length=255)

    @model_validator(mode="after")
    def _one_kind(self) -> RecallRequest:
        if (self.command is None) == (self.domain is None):
            raise ValueError("give either {command, error} (error recall) or {domain} (domain recall)")
        return self


class FactsMerge(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    domain: str = Field(min_length=1, max_length=255)
    intent: str = Field("other", max_length=100)
    selectors: list[str] = Field(default_factory=list)
    interaction_hints: list[str] = Field(default_factory=list,
                                         validation_alias=AliasChoices("interaction_hints", "interactionHints"))
    known_blockers: list[str] = Field(default_factory=list,
                                      validation_alias=AliasChoices("known_blockers", "knownBlockers"))
    anti_patterns: list[str] = Field(default_factory=list,
                                     validation_alias=AliasChoices("anti_patterns", "antiPatterns"))
    verified: bool = False


class LabelRequest(BaseModel):
    success: bool | None
    label_source: Literal["self_report", "judge", "human", "benchmark"]
    verified: bool = False


class Event(BaseModel):
    id: int
    type: str
    data: dict
    created_at: UtcDatetime


class EventPage(BaseModel):
    items: list[Event]
    next_cursor: str | None


@router.get("/lessons", response_model=LessonList)
def lessons(tier: int | None = Query(None, ge=1, le=1, description="1: the tier-1 set for a system prompt"),
            rt: Runtime = Depends(runtime), namespace: str = Depends(namespace_of)) -> LessonList:
    """All lessons, or (tier=1) at most ten for an agent's system prompt: seeds first, then the most used."""
    rows = rt.lessons.tier1(namespace) if tier == 1 else rt.lessons.list(namespace)
    return LessonList(lessons=[Lesson.of(r) for r in rows])


@router.post("/lessons", status_code=201, response_model=Lesson)
def add_lesson(body: LessonCreate, rt: Runtime = Depends(runtime), namespace: str = Depends(namespace_of)) -> Lesson:
    """Add a lesson by hand (e.g. a site-specific one)."""
    return Lesson.of(rt.lessons.add(namespace, lesson=body.lesson, category=body.category, domain=body.domain,
                                    failed_command=body.failed_command, error=body.error))


@router.post("/lessons/recall", response_model=LessonList)
def recall(body: RecallRequest, rt: Runtime = Depends(runtime), namespace: str = Depends(namespace_of)) -> LessonList:
    """Tier 2: lessons for a failed command and its error, or for a site."""
    if body.domain is not None:
        rows = rt.lessons.recall_domain(namespace, domain=body.domain)
    else:
        rows = rt.lessons.recall_error(namespace, command=body.command or "", error=body.error)
    return LessonList(lessons=[Lesson.of(r) for r in rows])


@router.get("/experience")
def experience(url: str = Query(..., min_length=1, max_length=2000), intent: str | None = Query(None, max_length=500),
               rt: Runtime = Depends(runtime), namespace: str = Depends(namespace_of)) -> dict:
    """Replay tier for a url and intent: `{tier (P1..P5), confidence, url_pattern, steps, known_blockers, warnings,
    episodes}` (steps only for P1/P2, from verified successes)."""
    return rt.experience.experience(namespace, url=url, intent=intent)


@router.post("/facts")
def merge_facts(body: FactsMerge, rt: Runtime = Depends(runtime), namespace: str = Depends(namespace_of)) -> dict:
    """Merge selectors, interaction hints, blockers and anti-patterns into a (domain, intent) entry; 409 once the
    entry is verified."""
    facts = {"selectors": body.selectors, "interaction_hints": body.interaction_hints,
             "known_blockers": body.known_blockers, "anti_patterns": body.anti_patterns}
    row = rt.experience.merge_facts(namespace, domain=body.domain, intent=body.intent, facts=facts, verify=body.verified)
    return {"domain": row.domain, "intent": row.intent, "verified": row.verified, **row.facts}


@router.post("/episodes/{episode_id}/label", response_model=EpisodeRead)
def relabel(episode_id: RowId, body: LabelRequest, rt: Runtime = Depends(runtime),
            namespace: str = Depends(namespace_of)) -> EpisodeRead:
    """Relabel an episode (e.g. a judge contradicts a self-reported success); recorded as an event."""
    row = rt.memory.relabel(namespace=namespace, episode_id=episode_id, success=body.success,
                            label_source=body.label_source, verified=body.verified)
    return EpisodeRead.of(row)


@router.get("/events", response_model=EventPage)
def events(type: str | None = Query(None, max_length=64), since: datetime | None = None, until: datetime | None = None,
           cursor: str | None = None, limit: int = Query(50, ge=1), rt: Runtime = Depends(runtime),
           namespace: str = Depends(namespace_of)) -> EventPage:
    """Memory events (lesson_recorded, lesson_promoted, episode_evicted, ...), filtered, in id order."""
    if limit > rt.settings.limits.max_page:
        raise LimitExceeded(f"limit={limit} exceeds {rt.settings.limits.max_page} (EMS_LIMITS__MAX_PAGE)")
    if cursor is not None and not cursor.isdigit():
        raise BadRequest("cursor must be the next_cursor value of a previous page")
    rows = rt.store.events(namespace, type_=type, since=since, until=until,
                           after_id=int(cursor) if cursor else None, limit=limit + 1)
    page = rows[:limit]
    return EventPage(items=[Event(id=r.id, type=r.type, data=r.data, created_at=r.created_at) for r in page],
                     next_cursor=str(page[-1].id) if len(rows) > limit else None)
