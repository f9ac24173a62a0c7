"""Memory events (evictions, dedups, lessons, recalls): written beside the change they record, read by operators."""

from __future__ import annotations

import builtins
import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from ems_service.repositories.database import Database, utcnow
from ems_service.tables import EventRecord


@dataclass(frozen=True)
class Event:
    id: int
    type: str
    data: dict
    created_at: datetime


def add_event(s: Session, namespace: str, type_: str, data: dict) -> None:
    """An event written in the caller's transaction (it commits or fails with the change it records)."""
    s.add(EventRecord(namespace=namespace, type=type_, data=json.loads(json.dumps(data)), created_at=utcnow()))


class EventRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def record(self, namespace: str, type_: str, data: dict) -> None:
        """An event in a transaction of its own (none on a standby: the events of reads are not kept there)."""
        if self.db.read_only:
            return
        with self.db.session() as s:
            add_event(s, namespace, type_, data)

    def page(self, namespace: str, *, type_: str | None, since: datetime | None, until: datetime | None,
             after_id: int | None, limit: int) -> builtins.list[Event]:
        """Events in id order after the cursor `after_id`, filtered by type and time."""
        q = select(EventRecord).where(EventRecord.namespace == namespace)
        if type_:
            q = q.where(EventRecord.type == type_)
        if since:
            q = q.where(EventRecord.created_at >= since)
        if until:
            q = q.where(EventRecord.created_at < until)
        if after_id is not None:
            q = q.where(EventRecord.id > after_id)
        with self.db.session() as s:
            return [Event(r.id, r.type, r.data, r.created_at) for r in s.scalars(q.order_by(EventRecord.id).limit(limit))]
