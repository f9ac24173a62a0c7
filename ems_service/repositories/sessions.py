"""Live sessions: the sessions table, read and written as plain `LiveSession`s."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy import delete, or_, select

from ems_service.repositories.database import Database
from ems_service.tables import SessionRecord


@dataclass
class LiveSession:
    """A run in progress: its partial trajectory, the advice given so far (for the cooldown), the last guidance."""

    id: str
    namespace: str
    trajectory: dict[str, Any]
    n_steps: int
    status: str
    advice_log: list[Any]
    last_guidance: dict[str, Any] | None
    episode_id: int | None
    created_at: datetime
    updated_at: datetime


def _live(row: SessionRecord) -> LiveSession:
    return LiveSession(**{f.name: getattr(row, f.name) for f in fields(LiveSession)})


class SessionRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def create(self, session: LiveSession) -> None:
        with self.db.session() as s:
            s.add(SessionRecord(**asdict(session)))

    def get(self, namespace: str, session_id: str) -> LiveSession | None:
        with self.db.session() as s:
            row = s.scalar(select(SessionRecord).where(SessionRecord.id == session_id,
                                                       SessionRecord.namespace == namespace))
            return None if row is None else _live(row)

    @contextmanager
    def editing(self, namespace: str, session_id: str) -> Iterator[LiveSession | None]:
        """The session locked for update (None when there is none); what the caller changes is written back when
        the block ends, in the same transaction (an exception writes nothing). Assign new values; a list or dict
        changed in place is not seen."""
        with self.db.session() as s:
            row = s.scalar(select(SessionRecord).where(SessionRecord.id == session_id,
                                                       SessionRecord.namespace == namespace).with_for_update())
            live = None if row is None else _live(row)
            yield live
            if row is not None and live is not None:
                for f in fields(LiveSession):
                    if getattr(live, f.name) is not getattr(row, f.name):
                        setattr(row, f.name, getattr(live, f.name))

    def recent(self, namespace: str, *, active_after: datetime, limit: int) -> list[LiveSession]:
        """The namespace's sessions, most recently active first: finished ones, and open ones active after
        `active_after`."""
        with self.db.session() as s:
            return [_live(r) for r in s.scalars(
                select(SessionRecord)
                .where(SessionRecord.namespace == namespace,
                       or_(SessionRecord.status != "open", SessionRecord.updated_at >= active_after))
                .order_by(SessionRecord.updated_at.desc(), SessionRecord.id).limit(limit))]

    def delete_idle(self, *, idle_before: datetime) -> tuple[list[str], int]:
        """Delete sessions not updated since `idle_before`: their ids, and how many rows went."""
        with self.db.session() as s:
            gone = list(s.scalars(select(SessionRecord.id).where(SessionRecord.updated_at < idle_before)))
            n = 0
            if gone:
                n = s.execute(delete(SessionRecord).where(SessionRecord.id.in_(gone))).rowcount or 0  # type: ignore[attr-defined]  # a DELETE gives a CursorResult
        return gone, n
