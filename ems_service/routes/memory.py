"""Lessons, experience, facts, relabelling and memory events."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from fastapi import APIRouter, Depends, Query
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, StrictBool, model_validator

from condenser.models import reject_nul
from ems_service.auth import DOWNGRADE_NOTE, may_vouch, require_verifier
from ems_service.limits import within_limits
from ems_service.repositories import Lesson as StoredLesson
from ems_service.routes.deps import Checked, Events, Experience, Ingest, Lessons, Namespace, Role
from ems_service.schemas import EpisodeRead, Notes, RowId, UtcDatetime, parse_cursor

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
    approved: bool = Field(description="false: a writer's hand-added lesson, kept out of tier 1 until a verifier or "
                                       "admin promotes it")

    @classmethod
    def of(cls, r: StoredLesson) -> Lesson:
        return cls(**{k: getattr(r, k) for k in cls.model_fields})


class LessonAdded(Lesson, Notes):
    pass


class LessonList(BaseModel):
    lessons: list[Lesson]


class LessonCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    _no_nul = model_validator(mode="before")(reject_nul)
    lesson: str = Field(min_length=3)
    category: Literal["tool_fallback", "best_practice", "error_recovery", "site_specific"] = "site_specific"
    domain: str | None = None
    failed_command: str | None = None
    error: str | None = None


class RecallRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str | None = Field(None, min_length=1)
    error: str | None = None
    domain: str | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one_kind(self) -> RecallRequest:
        if (self.command is None) == (self.domain is None):
            raise ValueError("give either {command, error} (error recall) or {domain} (domain recall)")
        return self


class FactsMerge(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    domain: str = Field(min_length=1)
    intent: str = "other"
    selectors: list[str] = Field(default_factory=list)
    interaction_hints: list[str] = Field(default_factory=list,
                                         validation_alias=AliasChoices("interaction_hints", "interactionHints"))
    known_blockers: list[str] = Field(default_factory=list,
                                      validation_alias=AliasChoices("known_blockers", "knownBlockers"))
    anti_patterns: list[str] = Field(default_factory=list,
                                     validation_alias=AliasChoices("anti_patterns", "antiPatterns"))
    verified: StrictBool = Field(False, description="lock the entry (a verifier or admin key; a writer's claim is "
                                                    "stored unverified)")

    _no_nul = model_validator(mode="before")(reject_nul)


class FactsRead(Notes):
    domain: str
    intent: str
    verified: bool
    selectors: list[str]
    interaction_hints: list[str]
    known_blockers: list[str]
    anti_patterns: list[str]


class LabelRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    success: StrictBool | None
    label_source: Literal["self_report", "judge", "human", "benchmark"]
    verified: StrictBool = False


class Relabelled(EpisodeRead, Notes):
    pass


class Event(BaseModel):
    id: int
    type: str
    data: dict
    created_at: UtcDatetime


class EventPage(BaseModel):
    items: list[Event]
    next_cursor: str | None


@router.get("/lessons", response_model=LessonList)
@within_limits
def lessons(lessons: Lessons, namespace: Namespace, limits: Checked,
            tier: int | None = Query(None, ge=1, le=1, description="1: the tier-1 set for a system prompt"),
            ) -> LessonList:
    """All lessons, or (tier=1) at most ten for an agent's system prompt: seeds first, then the most used."""
    rows = lessons.tier1(namespace) if tier == 1 else lessons.list(namespace)
    return LessonList(lessons=[Lesson.of(r) for r in rows])


@router.post("/lessons", status_code=201, response_model=LessonAdded)
@within_limits
def add_lesson(body: LessonCreate, lessons: Lessons, namespace: Namespace, role: Role,
               limits: Checked) -> LessonAdded:
    """Add a lesson by hand (e.g. a site-specific one). It is checked like a stored run (no role markup or
    instruction phrases: 422; secrets redacted); a writer's lesson stays out of tier 1 until a verifier or admin
    promotes it."""
    row = lessons.add(namespace, lesson=body.lesson, category=body.category, domain=body.domain,
                         failed_command=body.failed_command, error=body.error, approved=may_vouch(role))
    notes = [] if row.approved else ["kept out of tier 1 until a verifier or admin key promotes it "
                                     f"(POST /v1/lessons/{row.id}/promote)"]
    return LessonAdded(**Lesson.of(row).model_dump(), notes=notes)


@router.post("/lessons/{lesson_id}/promote", response_model=Lesson, dependencies=[Depends(require_verifier)])
@within_limits
def promote_lesson(lesson_id: RowId, lessons: Lessons, namespace: Namespace, limits: Checked) -> Lesson:
    """Approve a hand-added lesson for tier 1 (a verifier or admin key)."""
    return Lesson.of(lessons.promote(namespace, lesson_id=lesson_id))


@router.post("/lessons/recall", response_model=LessonList)
@within_limits
def recall(body: RecallRequest, lessons: Lessons, namespace: Namespace, limits: Checked) -> LessonList:
    """Tier 2: lessons for a failed command and its error, or for a site."""
    if body.domain is not None:
        rows = lessons.recall_domain(namespace, domain=body.domain)
    else:
        rows = lessons.recall_error(namespace, command=body.command or "", error=body.error)
    return LessonList(lessons=[Lesson.of(r) for r in rows])


@router.get("/experience")
@within_limits
def experience(experience: Experience, namespace: Namespace, limits: Checked, url: str = Query(..., min_length=1),
               intent: str | None = Query(None)) -> dict:
    """Replay tier for a url and intent: `{tier (P1..P5), confidence, url_pattern, steps, known_blockers, warnings,
    episodes}` (steps only for P1/P2, from verified successes that stay on the url's own site)."""
    return experience.experience(namespace, url=url, intent=intent)


@router.post("/facts", response_model=FactsRead)
@within_limits
def merge_facts(body: FactsMerge, experience: Experience, namespace: Namespace, role: Role,
                limits: Checked) -> FactsRead:
    """Merge selectors, interaction hints, blockers and anti-patterns into a (domain, intent) entry; 409 once the
    entry is verified (only a verifier or admin key may verify it)."""
    facts = {"selectors": body.selectors, "interaction_hints": body.interaction_hints,
             "known_blockers": body.known_blockers, "anti_patterns": body.anti_patterns}
    downgraded = body.verified and not may_vouch(role)
    row = experience.merge_facts(namespace, domain=body.domain, intent=body.intent, facts=facts,
                                    verify=body.verified and not downgraded)
    return FactsRead(domain=row.domain, intent=row.intent, verified=row.verified, **row.facts,
                     label_downgraded=downgraded,
                     notes=["a writer key cannot verify facts: merged unverified"] if downgraded else [])


@router.post("/episodes/{episode_id}/label", response_model=Relabelled)
@within_limits
def relabel(episode_id: RowId, body: LabelRequest, ingest: Ingest, namespace: Namespace, role: Role,
            limits: Checked) -> Relabelled:
    """Relabel an episode (e.g. a judge contradicts a self-reported success); recorded as an event. A writer's
    verified claim is stored as an unverified self-report; a verified label only a verifier or admin may change."""
    row, downgraded = ingest.relabel(namespace=namespace, episode_id=episode_id, success=body.success,
                                        label_source=body.label_source, verified=body.verified, role=role)
    return Relabelled(**EpisodeRead.of(row).model_dump(), label_downgraded=downgraded,
                      notes=[DOWNGRADE_NOTE] if downgraded else [])


@router.get("/events", response_model=EventPage)
@within_limits
def events(type: str | None = Query(None), since: datetime | None = None, until: datetime | None = None,
           cursor: str | None = None, limit: int = Query(50, ge=1), *, events: Events, namespace: Namespace,
           limits: Checked) -> EventPage:
    """Memory events (lesson_recorded, lesson_promoted, episode_evicted, ...), filtered, in id order."""
    after = parse_cursor(cursor)
    rows = events.page(namespace, type_=type, since=since, until=until, after_id=after, limit=limit + 1)
    page = rows[:limit]
    return EventPage(items=[Event(id=r.id, type=r.type, data=r.data, created_at=r.created_at) for r in page],
                     next_cursor=str(page[-1].id) if len(rows) > limit else None)
