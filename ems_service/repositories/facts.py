"""Experience facts: the (domain, intent) entries of selectors, hints, blockers and anti-patterns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from ems_service.repositories import events
from ems_service.repositories.database import Database, utcnow
from ems_service.tables import FactRecord


@dataclass(frozen=True)
class Facts:
    domain: str
    intent: str
    facts: dict[str, list[str]]
    verified: bool
    updated_at: datetime


def _facts(row: FactRecord) -> Facts:
    return Facts(row.domain, row.intent, row.facts, row.verified, row.updated_at)


class FactRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, namespace: str, *, domain: str, intent: str) -> Facts | None:
        with self.db.session() as s:
            row = s.scalar(select(FactRecord).where(FactRecord.namespace == namespace, FactRecord.domain == domain,
                                                    FactRecord.intent == intent))
            return None if row is None else _facts(row)

    def merge(self, namespace: str, *, domain: str, intent: str,
              merged: Callable[[Facts | None], tuple[dict[str, list[str]], bool]]) -> Facts:
        """Replace the entry with `merged(current)` (its lists and verified flag), in one transaction with its
        event; the entry is locked meanwhile, and nothing is written when `merged` raises."""
        with self.db.session() as s:
            row = s.scalar(select(FactRecord).where(FactRecord.namespace == namespace, FactRecord.domain == domain,
                                                    FactRecord.intent == intent).with_for_update())
            facts, verified = merged(None if row is None else _facts(row))
            if row is None:
                row = FactRecord(namespace=namespace, domain=domain, intent=intent, verified=False, updated_at=utcnow())
                s.add(row)
            row.facts, row.verified, row.updated_at = facts, verified, utcnow()
            events.add_event(s, namespace, "facts_merged", {"domain": domain, "intent": intent, "verified": verified})
            return _facts(row)
