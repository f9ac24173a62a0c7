"""Two-tier lesson memory: seeds, lessons learned at ingest, dedup, promotion, pruning, recall, events."""

from __future__ import annotations

import dataclasses
import logging
from datetime import datetime, timedelta

from coach import error_class, lesson_words, orders_reader, sanitize
from condenser import LessonCandidate, Trajectory, command_of, domain_of, extract_lessons, normalize_error, redact_text
from ems_service.errors import NotFound, ValidationFailed
from ems_service.metrics import Metrics
from ems_service.repositories import EventRepository, Lesson, LessonRepository, utcnow

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


def _promotable(row: Lesson) -> bool:
    """A learned error recovery seen often enough on enough sites becomes a best practice."""
    return (row.category == "error_recovery" and row.use_count >= PROMOTE_USES
            and len(row.triggered_domains) >= PROMOTE_DOMAINS and row.domain is None and not row.generic)


def instruction_markup(text: str | None) -> bool:
    """True when `text` holds what the coach strips from quoted evidence: role markers (`<|im_start|>`, `[INST]`,
    `<system>`, `SYSTEM:` lines, `### Instruction`) or instruction phrases ("ignore previous instructions", "you
    are now", "act as"). Tier 1 goes into agents' system prompts verbatim, so such text never gets there."""
    if not text:
        return False
    return sanitize(text, limit=len(text) + 1).count("[removed]") > text.count("[removed]")


def orders_agents(text: str | None) -> bool:
    """True when `text`, served to agents as advice (a lesson, a site's facts), orders them in a kind no advice
    gives: the task declared over, an answer dictated, money moved, another store, the reader addressed, what other
    agents "always" do (`coach.orders_reader`)."""
    return orders_reader(str(text)) if text else False  # the plain text is the remembered answer's key


def _orders_in(row: Lesson) -> bool:
    """A lesson as served (a hand-added one stored before the check) whose words order the agent: text or error."""
    return orders_agents(row.lesson) or orders_agents(row.error_pattern)


def _fits_site(row: Lesson, domain: str | None) -> bool:
    """A site-specific lesson is said on its own site only (or a site it was learned on); the others anywhere."""
    if row.category != "site_specific":
        return True
    return domain is not None and (_matches_domain(row.domain, domain)
                                   or any(_matches_domain(d, domain) for d in row.triggered_domains))


def said(row: Lesson, domain: str | None) -> Lesson | None:
    """`row` as an agent may read it: a lesson learned from a run (it has recovery steps) rebuilt from its parts
    (`coach.lesson_words`: never its error's own words, labels through the whitelist, a navigation only on
    `domain`), None when it cannot be said; a seed or a hand-added lesson (no recovery steps) as it is: checked when
    it was added."""
    if row.source != "learned" or not row.recovery:
        return row
    words = lesson_words(row.failed_command, row.error_pattern, row.recovery, domain)
    if not words:
        return None
    # every field an agent receives (MCP returns the whole lesson): the error as its class, no writer's sites
    return dataclasses.replace(row, lesson=words, error_pattern=error_class(row.error_pattern),
                               triggered_domains=[], recovery=[])


def _said(rows: list[Lesson], domain: str | None) -> list[Lesson]:
    """The rows an agent may read, as it reads them; never one whose served words order it (`_orders_in`)."""
    return [r for r in (said(row, domain) for row in rows) if r is not None and not _orders_in(r)]


class LessonService:
    """Lessons per namespace, derived from the same episodes as the episodic memory."""

    def __init__(self, *, lessons: LessonRepository, events: EventRepository, metrics: Metrics | None = None) -> None:
        self.lessons = lessons
        self.events = events
        self.metrics = metrics
        self._seeded: set[str] = set()

    def ensure_seeds(self, namespace: str) -> None:
        """Create the three seed lessons the first time a namespace is used (they are never pruned)."""
        if namespace in self._seeded:
            return
        self.lessons.seed(namespace, SEEDS)
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
        return self.lessons.record_learned(namespace, candidates, promotable=_promotable)

    def add(self, namespace: str, *, lesson: str, category: str, domain: str | None = None,
            failed_command: str | None = None, error: str | None = None, approved: bool = False) -> Lesson:
        """A lesson written by hand, checked like a stored run: role markup or instruction phrases are refused
        (422), secrets are redacted. Unless `approved` (a verifier or admin wrote it) it stays out of tier 1
        until `promote`."""
        for name, value in (("lesson", lesson), ("failed_command", failed_command), ("error", error),
                            ("domain", domain)):
            if instruction_markup(value):
                raise ValidationFailed(f"{name}: role markup or instruction phrases are not allowed in a lesson "
                                       "(it may be served to agents' system prompts)")
            if name != "domain" and orders_agents(value):  # recall serves every field of a hand-added lesson
                raise ValidationFailed(f"{name}: orders to the agent (to stop, to give an answer, to pay or go "
                                       "elsewhere, what other agents always do) are not allowed in a lesson (it may "
                                       "be served to agents' system prompts)")
        self.ensure_seeds(namespace)
        dom = (domain_of(domain) or domain.lower()) if domain else None
        return self.lessons.add(namespace, lesson=redact_text(lesson), category=category, domain=dom,
                                failed_command=failed_command.lower() if failed_command else None,
                                error_pattern=normalize_error(redact_text(error)) if error else None,
                                approved=approved)

    def promote(self, namespace: str, *, lesson_id: int) -> Lesson:
        """Approve a hand-added lesson for tier 1 (a verifier's or admin's call)."""
        row = self.lessons.approve(namespace, lesson_id)
        if row is None:
            raise NotFound(f"lesson {lesson_id} does not exist in this namespace")
        return row

    # -- reading --------------------------------------------------------------------------------------------

    def tier1(self, namespace: str, *, record: bool = True) -> list[Lesson]:
        """At most ten lessons for an agent's system prompt: seeds first, then the most used. Only approved
        lessons, and never one with role markup or instruction phrases (a learned lesson's text comes from
        agents' actions). `record=False` (the dashboard looking) leaves no tier1_loaded event."""
        self.ensure_seeds(namespace)
        rows = _said(self.lessons.general(namespace, limit=TIER1_LIMIT * 5), None)
        rows = [r for r in rows if not instruction_markup(r.lesson)][:TIER1_LIMIT]
        if record:
            self.events.record(namespace, "tier1_loaded", {"count": len(rows)})
        return rows

    def recall_error(self, namespace: str, *, command: str, error: str | None, record: bool = True,
                     domain: str | None = None) -> list[Lesson]:
        """Tier 2 by error: approved lessons for this command whose pattern matches the error (seeds match any),
        as an agent on `domain` may read them (`said`). They reach the coach's advice, so a writer's hand-added
        lesson waits for promotion here too."""
        self.ensure_seeds(namespace)
        cmd = command_of(command)
        pattern = normalize_error(error) if error else None
        rows = self.lessons.approved(namespace, command=cmd)
        dom = (domain_of(domain) or domain.lower().strip()) if domain else None
        hits = _said([r for r in rows if (r.error_pattern is None or pattern is None or r.error_pattern == pattern
                                          or r.error_pattern in pattern or pattern in r.error_pattern)
                      and _fits_site(r, dom)], domain)[:5]
        if record:
            self.events.record(namespace, "error_recall", {"command": cmd, "count": len(hits)})
        if self.metrics is not None:
            self.metrics.lesson_recalls.labels("error").inc()
        return hits

    def recall_texts(self, namespace: str, command: str, error: str | None, domain: str | None = None) -> list[str]:
        """The text of `recall_error`'s lessons for a run on `domain` (what the coaching service asks for)."""
        return [r.lesson for r in self.recall_error(namespace, command=command, error=error, domain=domain)]

    def recall_domain(self, namespace: str, *, domain: str) -> list[Lesson]:
        """Tier 2 by site: approved lessons of that domain or a parent domain (amazon.com matches www.amazon.com)."""
        self.ensure_seeds(namespace)
        dom = domain_of(domain) or domain.lower().strip()
        rows = self.lessons.approved(namespace)
        hits = _said([r for r in rows if _matches_domain(r.domain, dom)
                      or (r.category == "site_specific" and any(_matches_domain(d, dom) for d in r.triggered_domains))],
                     dom)[:10]
        self.events.record(namespace, "domain_recall", {"domain": dom, "count": len(hits)})
        if self.metrics is not None:
            self.metrics.lesson_recalls.labels("domain").inc()
        return hits

    def list(self, namespace: str) -> list[Lesson]:
        self.ensure_seeds(namespace)
        return self.lessons.all(namespace)

    # -- pruning --------------------------------------------------------------------------------------------

    def prune(self, *, now: datetime | None = None) -> int:
        """Delete learned lessons unused for 90 days with fewer than 5 uses (seeds are kept)."""
        now = now or utcnow()
        stale = self.lessons.delete_stale(unused_since=now - PRUNE_AFTER, uses_below=PROMOTE_USES)
        for ns in sorted({n for _, n in stale}):
            self.events.record(ns, "lessons_pruned", {"count": sum(1 for _, n in stale if n == ns)})
        if stale:
            logger.info("lessons pruned: %d", len(stale))
        return len(stale)
