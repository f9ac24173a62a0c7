"""Lessons: the lessons table, read and written as plain `Lesson`s, each change with its event."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, or_, select
from sqlalchemy.orm import Session

from condenser import LessonCandidate
from ems_service.repositories.database import Database, aware, utcnow
from ems_service.repositories.events import add_event
from ems_service.tables import LessonRecord


@dataclass(frozen=True)
class Lesson:
    id: int
    namespace: str
    lesson: str
    category: str
    failed_command: str | None
    error_pattern: str | None
    domain: str | None
    use_count: int
    created_at: datetime
    last_used: datetime
    source: str
    triggered_domains: list[str]
    recovery: list[str]
    generic: bool
    approved: bool


def _lesson(row: LessonRecord) -> Lesson:
    return Lesson(**{f.name: getattr(row, f.name) for f in fields(Lesson)})


class LessonRepository:
    def __init__(self, db: Database) -> None:
        self.db = db
        # one thread at a time seeds: on PostgreSQL it holds the advisory-lock connection while its session
        # takes a second one, and many threads doing so at once could drain the connection pool
        self._seed_lock = threading.Lock()

    def seed(self, namespace: str, seeds: list[dict[str, Any]]) -> None:
        """Insert the seed lessons unless the namespace has them (replicas starting together: one of them seeds)."""
        with self._seed_lock, self.db.exclusive(f"seeds:{namespace}") as mine, self.db.session() as s:
            have = s.scalar(select(LessonRecord.id).where(LessonRecord.namespace == namespace,
                                                          LessonRecord.source == "seed").limit(1))
            if have is None and mine:
                now = utcnow()
                s.add_all(LessonRecord(namespace=namespace, domain=None, use_count=1, created_at=now, last_used=now,
                                       source="seed", triggered_domains=[], generic=False, **seed) for seed in seeds)

    def record_learned(self, namespace: str, candidates: list[LessonCandidate], *,
                       promotable: Callable[[Lesson], bool]) -> list[int]:
        """Record candidates in one transaction (an ingest batch costs one commit); the lesson ids touched.

        The rows a candidate could repeat are read in one query for the whole batch (by its commands with its error
        patterns or none, and by its lessons), not two per candidate: the rows of a common command with other
        errors stay unread. A row recorded for one candidate is there for the next."""
        with self.db.session() as s:
            patterns = {c.error_pattern for c in candidates if c.error_pattern is not None}
            known = list(s.scalars(select(LessonRecord).where(
                LessonRecord.namespace == namespace,
                or_(and_(LessonRecord.failed_command.in_({c.failed_command for c in candidates}),
                         or_(LessonRecord.error_pattern.in_(patterns), LessonRecord.error_pattern.is_(None))),
                    and_(LessonRecord.category == "error_recovery", LessonRecord.domain.is_(None),
                         LessonRecord.lesson.in_({c.lesson for c in candidates}))),
            ).order_by(LessonRecord.id)))
            return [self._record(s, namespace, c, promotable, known) for c in candidates]

    @staticmethod
    def _repeated(c: LessonCandidate, known: list[LessonRecord]) -> LessonRecord | None:
        """The row `c` repeats: the same command with the same error pattern (or a seed of the command, which has
        none), a seed first, then the oldest; else a general error recovery with the same words."""
        same = [r for r in known if r.failed_command == c.failed_command
                and (r.error_pattern == c.error_pattern or (r.error_pattern is None and r.source == "seed"))]
        if same:
            return min(same, key=lambda r: (r.source != "seed", r.id))
        return next((r for r in known if r.category == "error_recovery" and r.domain is None
                     and r.lesson == c.lesson), None)

    def _record(self, s: Session, namespace: str, c: LessonCandidate, promotable: Callable[[Lesson], bool],
                known: list[LessonRecord]) -> int:
        """Insert a lesson, or count a repeat (`_repeated` among `known`, the batch's rows). A repeat that becomes
        `promotable` is promoted to a best practice."""
        now = utcnow()
        domain = c.domain
        existing = self._repeated(c, known)
        if existing is not None:
            existing.use_count += 1
            existing.last_used = now
            if domain and domain not in existing.triggered_domains:
                existing.triggered_domains = list(existing.triggered_domains) + [domain]
            events = [("lesson_deduplicated", {"lesson_id": existing.id, "use_count": existing.use_count})]
            if promotable(_lesson(existing)):
                existing.category = "best_practice"
                events.append(("lesson_promoted", {"lesson_id": existing.id}))
            lesson_id = existing.id
        else:
            row = LessonRecord(namespace=namespace, lesson=c.lesson,
                               category="site_specific" if c.site else "error_recovery",
                               failed_command=c.failed_command, error_pattern=c.error_pattern, domain=c.site,
                               use_count=1, created_at=now, last_used=now, source="learned",
                               triggered_domains=[domain] if domain else [], recovery=c.recovery,
                               generic=c.generic)
            s.add(row)
            s.flush()
            known.append(row)
            lesson_id = row.id
            events = [("lesson_recorded", {"lesson_id": row.id})]
        for type_, data in events:
            add_event(s, namespace, type_, data)
        return lesson_id

    def add(self, namespace: str, *, lesson: str, category: str, domain: str | None, failed_command: str | None,
            error_pattern: str | None, approved: bool) -> Lesson:
        """A hand-written lesson and its event."""
        now = utcnow()
        row = LessonRecord(namespace=namespace, lesson=lesson, category=category, domain=domain,
                           failed_command=failed_command, error_pattern=error_pattern, use_count=1,
                           created_at=now, last_used=now, source="learned", triggered_domains=[domain] if domain else [],
                           recovery=[], generic=False, approved=approved)
        with self.db.session() as s:
            s.add(row)
            s.flush()
            add_event(s, namespace, "lesson_recorded", {"lesson_id": row.id, "approved": approved})
            return _lesson(row)

    def approve(self, namespace: str, lesson_id: int) -> Lesson | None:
        """Mark a lesson approved (with its event, when it was not); None when there is no such lesson."""
        with self.db.session() as s:
            row = s.scalar(select(LessonRecord).where(LessonRecord.namespace == namespace,
                                                      LessonRecord.id == lesson_id).with_for_update())
            if row is None:
                return None
            if not row.approved:
                row.approved = True
                add_event(s, namespace, "lesson_approved", {"lesson_id": lesson_id})
            return _lesson(row)

    def general(self, namespace: str, *, limit: int) -> list[Lesson]:
        """Approved best practices and tool fallbacks: seeds first, then the most used."""
        with self.db.session() as s:
            return [_lesson(r) for r in s.scalars(
                select(LessonRecord).where(LessonRecord.namespace == namespace, LessonRecord.approved.is_(True),
                                           LessonRecord.category.in_(["best_practice", "tool_fallback"]))
                .order_by((LessonRecord.source == "seed").desc(), LessonRecord.use_count.desc(), LessonRecord.id)
                .limit(limit))]

    def approved(self, namespace: str, *, command: str | None = None) -> list[Lesson]:
        """Approved lessons (of one failed command when given), most used first."""
        q = select(LessonRecord).where(LessonRecord.namespace == namespace, LessonRecord.approved.is_(True))
        if command is not None:
            q = q.where(LessonRecord.failed_command == command)
        with self.db.session() as s:
            return [_lesson(r) for r in s.scalars(q.order_by(LessonRecord.use_count.desc(), LessonRecord.id))]

    def all(self, namespace: str) -> list[Lesson]:
        with self.db.session() as s:
            return [_lesson(r) for r in s.scalars(select(LessonRecord).where(LessonRecord.namespace == namespace)
                                                  .order_by(LessonRecord.id))]

    def delete_stale(self, *, unused_since: datetime, uses_below: int) -> list[tuple[int, str]]:
        """Delete learned lessons last used before `unused_since` with fewer than `uses_below` uses (seeds are
        kept); the (id, namespace) of each."""
        with self.db.session() as s:
            stale = [(r.id, r.namespace) for r in s.scalars(
                select(LessonRecord).where(LessonRecord.source == "learned", LessonRecord.use_count < uses_below))
                if aware(r.last_used) < unused_since]
            if stale:
                s.execute(delete(LessonRecord).where(LessonRecord.id.in_([i for i, _ in stale])))
        return stale
