"""Two-tier lesson memory: seeds, lessons learned at ingest, dedup, promotion, pruning, recall, events."""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta

from sqlalchemy import and_, delete, or_, select
from sqlalchemy.orm import Session

from coach import sanitize
from condenser import LessonCandidate, Trajectory, command_of, domain_of, extract_lessons, normalize_error, redact_text
from ems_service.errors import NotFound, ValidationFailed
from ems_service.store import Store, aware, utcnow
from ems_service.tables import LessonRecord

logger = logging.getLogger(__name__)

SEEDS = [
    {"lesson": "If filling a field fails, click the field first, then type the text.", "category": "tool_fallback",
     "failed_command": "fill", "error_pattern": None, "recovery": ["click the field", "type the text"]},
    {"lesson": "Press Enter to submit a search instead of hunting for a search button.", "category": "best_practice",
     "failed_command": None, "error_pattern": None, "recovery": ["press enter"]},
    {"lesson": "Press Escape to dismiss an overlay, cookie banner or modal that blocks the page.",
     "category": "best_practice", "failed_command": None, "error_pattern": None, "recovery": ["press escape"]},
]
PROMOTE_USES = 5
PROMOTE_DOMAINS = 3
PRUNE_AFTER = timedelta(days=90)
TIER1_LIMIT = 10
MAX_COMMAND, MAX_DOMAIN = 64, 255  # the lessons table's failed_command and domain columns


def _matches_domain(lesson_domain: str | None, domain: str) -> bool:
    if not lesson_domain:
        return False
    return domain == lesson_domain or domain.endswith("." + lesson_domain)


def _storable(c: LessonCandidate) -> bool:
    """The candidate's command and sites fit the lessons table's columns."""
    return len(c.failed_command) <= MAX_COMMAND and all(len(d) <= MAX_DOMAIN for d in (c.domain, c.site) if d)


def instruction_markup(text: str | None) -> bool:
    """True when `text` holds what the coach strips from quoted evidence: role markers (`<|im_start|>`, `[INST]`,
    `<system>`, `SYSTEM:` lines, `### Instruction`) or instruction phrases ("ignore previous instructions", "you
    are now", "act as"). Tier 1 goes into agents' system prompts verbatim, so such text never gets there."""
    if not text:
        return False
    return sanitize(text, limit=len(text) + 1).count("[removed]") > text.count("[removed]")


class LessonService:
    """Lessons per namespace, derived from the same episodes as the episodic memory."""

    def __init__(self, store: Store, metrics=None) -> None:  # noqa: ANN001 - ems_service.metrics.Metrics
        self.store = store
        self.metrics = metrics
        self._seeded: set[str] = set()
        # one thread at a time seeds: on PostgreSQL it holds the advisory-lock connection while its session
        # takes a second one, and many threads doing so at once could drain the connection pool
        self._seed_lock = threading.Lock()

    def ensure_seeds(self, namespace: str) -> None:
        """Create the three seed lessons the first time a namespace is used (they are never pruned)."""
        if namespace in self._seeded:
            return
        with self._seed_lock, self.store.exclusive(f"seeds:{namespace}") as mine, self.store.session() as s:
            have = s.scalar(select(LessonRecord.id).where(LessonRecord.namespace == namespace,
                                                          LessonRecord.source == "seed").limit(1))
            if have is None and mine:  # replicas starting together: one of them seeds
                now = utcnow()
                s.add_all(LessonRecord(namespace=namespace, domain=None, use_count=1, created_at=now, last_used=now,
                                       source="seed", triggered_domains=[], generic=False, **seed) for seed in SEEDS)
        self._seeded.add(namespace)

    # -- learning -------------------------------------------------------------------------------------------

    def learn(self, namespace: str, trajectory: Trajectory) -> list[int]:
        """Record the failure -> recovery lessons of a finished run; returns the lesson ids touched."""
        return self.learn_many(namespace, [trajectory])

    def learn_many(self, namespace: str, trajectories: list[Trajectory]) -> list[int]:
        """`learn` for a batch of runs, in one transaction (an ingest batch costs one commit, not one per lesson).
        A candidate whose command or site does not fit its column is no lesson (a 'command' of 100 letters is
        not one): skipped, so one odd run cannot fail the batch's lessons on PostgreSQL and not on SQLite."""
        candidates = [c for t in trajectories for c in extract_lessons(t) if _storable(c)]
        if not candidates:
            return []
        self.ensure_seeds(namespace)
        with self.store.session() as s:
            return [self._record(s, namespace, c) for c in candidates]

    def _record(self, s: Session, namespace: str, c: LessonCandidate) -> int:
        """Insert a lesson, or count a repeat: dedup by (failed_command, error_pattern), else by
        (category, domain, lesson). A seed with no error pattern matches every error of its command."""
        now = utcnow()
        domain = c.domain
        existing = s.scalar(
            select(LessonRecord).where(
                LessonRecord.namespace == namespace, LessonRecord.failed_command == c.failed_command,
                or_(LessonRecord.error_pattern == c.error_pattern,
                    and_(LessonRecord.error_pattern.is_(None), LessonRecord.source == "seed")),
            ).order_by(LessonRecord.source.desc(), LessonRecord.id).limit(1)
        ) or s.scalar(
            select(LessonRecord).where(LessonRecord.namespace == namespace, LessonRecord.category == "error_recovery",
                                       LessonRecord.domain.is_(None), LessonRecord.lesson == c.lesson).limit(1)
        )
        if existing is not None:
            existing.use_count += 1
            existing.last_used = now
            if domain and domain not in existing.triggered_domains:
                existing.triggered_domains = list(existing.triggered_domains) + [domain]
            events = [("lesson_deduplicated", {"lesson_id": existing.id, "use_count": existing.use_count})]
            if self._promotable(existing):
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
            lesson_id = row.id
            events = [("lesson_recorded", {"lesson_id": row.id})]
        for type_, data in events:
            self.store.add_event(s, namespace, type_, data)
        return lesson_id

    @staticmethod
    def _promotable(row: LessonRecord) -> bool:
        return (row.category == "error_recovery" and row.use_count >= PROMOTE_USES
                and len(row.triggered_domains) >= PROMOTE_DOMAINS and row.domain is None and not row.generic)

    def add(self, namespace: str, *, lesson: str, category: str, domain: str | None = None,
            failed_command: str | None = None, error: str | None = None, approved: bool = False) -> LessonRecord:
        """A lesson written by hand, checked like a stored run: role markup or instruction phrases are refused
        (422), secrets are redacted. Unless `approved` (a verifier or admin wrote it) it stays out of tier 1
        until `promote`."""
        for name, value in (("lesson", lesson), ("failed_command", failed_command), ("error", error),
                            ("domain", domain)):
            if instruction_markup(value):
                raise ValidationFailed(f"{name}: role markup or instruction phrases are not allowed in a lesson "
                                       "(it may be served to agents' system prompts)")
        self.ensure_seeds(namespace)
        now = utcnow()
        dom = (domain_of(domain) or domain.lower()) if domain else None
        row = LessonRecord(namespace=namespace, lesson=redact_text(lesson), category=category, domain=dom,
                           failed_command=failed_command.lower() if failed_command else None,
                           error_pattern=normalize_error(redact_text(error)) if error else None, use_count=1,
                           created_at=now, last_used=now, source="learned", triggered_domains=[dom] if dom else [],
                           recovery=[], generic=False, approved=approved)
        with self.store.session() as s:
            s.add(row)
            s.flush()
            self.store.add_event(s, namespace, "lesson_recorded", {"lesson_id": row.id, "approved": approved})
        return row

    def promote(self, namespace: str, *, lesson_id: int) -> LessonRecord:
        """Approve a hand-added lesson for tier 1 (a verifier's or admin's call)."""
        with self.store.session() as s:
            row = s.scalar(select(LessonRecord).where(LessonRecord.namespace == namespace,
                                                      LessonRecord.id == lesson_id).with_for_update())
            if row is None:
                raise NotFound(f"lesson {lesson_id} does not exist in this namespace")
            if not row.approved:
                row.approved = True
                self.store.add_event(s, namespace, "lesson_approved", {"lesson_id": lesson_id})
        return row

    # -- reading --------------------------------------------------------------------------------------------

    def tier1(self, namespace: str, *, record: bool = True) -> list[LessonRecord]:
        """At most ten lessons for an agent's system prompt: seeds first, then the most used. Only approved
        lessons, and never one with role markup or instruction phrases (a learned lesson's text comes from
        agents' actions). `record=False` (the dashboard looking) leaves no tier1_loaded event."""
        self.ensure_seeds(namespace)
        with self.store.session() as s:
            rows = list(s.scalars(
                select(LessonRecord).where(LessonRecord.namespace == namespace, LessonRecord.approved.is_(True),
                                           LessonRecord.category.in_(["best_practice", "tool_fallback"]))
                .order_by((LessonRecord.source == "seed").desc(), LessonRecord.use_count.desc(), LessonRecord.id)
                .limit(TIER1_LIMIT * 5)))
        rows = [r for r in rows if not instruction_markup(r.lesson)][:TIER1_LIMIT]
        if record:
            self.store.record_event(namespace, "tier1_loaded", {"count": len(rows)})
        return rows

    def recall_error(self, namespace: str, *, command: str, error: str | None, record: bool = True) -> list[LessonRecord]:
        """Tier 2 by error: approved lessons for this command whose pattern matches the error (seeds match any).
        They reach the coach's advice, so a writer's lesson waits for promotion here too."""
        self.ensure_seeds(namespace)
        cmd = command_of(command)
        pattern = normalize_error(error) if error else None
        with self.store.session() as s:
            rows = list(s.scalars(
                select(LessonRecord).where(LessonRecord.namespace == namespace, LessonRecord.failed_command == cmd,
                                           LessonRecord.approved.is_(True))
                .order_by(LessonRecord.use_count.desc(), LessonRecord.id)))
        hits = [r for r in rows if r.error_pattern is None or pattern is None or r.error_pattern == pattern
                or r.error_pattern in pattern or pattern in r.error_pattern][:5]
        if record:
            self.store.record_event(namespace, "error_recall", {"command": cmd, "count": len(hits)})
        if self.metrics is not None:
            self.metrics.lesson_recalls.labels("error").inc()
        return hits

    def recall_domain(self, namespace: str, *, domain: str) -> list[LessonRecord]:
        """Tier 2 by site: approved lessons of that domain or a parent domain (amazon.com matches www.amazon.com)."""
        self.ensure_seeds(namespace)
        dom = domain_of(domain) or domain.lower().strip()
        with self.store.session() as s:
            rows = list(s.scalars(select(LessonRecord).where(LessonRecord.namespace == namespace,
                                                             LessonRecord.approved.is_(True))
                                  .order_by(LessonRecord.use_count.desc(), LessonRecord.id)))
        hits = [r for r in rows if _matches_domain(r.domain, dom)
                or (r.category == "site_specific" and any(_matches_domain(d, dom) for d in r.triggered_domains))][:10]
        self.store.record_event(namespace, "domain_recall", {"domain": dom, "count": len(hits)})
        if self.metrics is not None:
            self.metrics.lesson_recalls.labels("domain").inc()
        return hits

    def list(self, namespace: str) -> list[LessonRecord]:
        self.ensure_seeds(namespace)
        with self.store.session() as s:
            return list(s.scalars(select(LessonRecord).where(LessonRecord.namespace == namespace)
                                  .order_by(LessonRecord.id)))

    # -- pruning --------------------------------------------------------------------------------------------

    def prune(self, *, now: datetime | None = None) -> int:
        """Delete learned lessons unused for 90 days with fewer than 5 uses (seeds are kept)."""
        now = now or utcnow()
        cutoff = now - PRUNE_AFTER
        with self.store.session() as s:
            stale = [(r.id, r.namespace) for r in s.scalars(
                select(LessonRecord).where(LessonRecord.source == "learned", LessonRecord.use_count < PROMOTE_USES))
                if aware(r.last_used) < cutoff]
            if stale:
                s.execute(delete(LessonRecord).where(LessonRecord.id.in_([i for i, _ in stale])))
        for ns in sorted({n for _, n in stale}):
            self.store.record_event(ns, "lessons_pruned", {"count": sum(1 for _, n in stale if n == ns)})
        if stale:
            logger.info("lessons pruned: %d", len(stale))
        return len(stale)
