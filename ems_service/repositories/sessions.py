"""Live sessions: the sessions table, read and written as plain `LiveSession`s.

Core statements on plain connections, not ORM entities: every append of a live session reads its row and writes
it back, and the ORM's identity map, change tracking and flush cost more than the statements themselves."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Row, Table, bindparam, delete, insert, or_, select, update

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


_TABLE = cast(Table, SessionRecord.__table__)  # a declarative class's table is a Table
_FIELDS = tuple(f.name for f in fields(LiveSession))
_COLUMNS = tuple(_TABLE.c[name] for name in _FIELDS)  # a row of these is a LiveSession's fields in order


def _live(row: Row[Any]) -> LiveSession:
    return LiveSession(**dict(zip(_FIELDS, row, strict=True)))


# Every append's statements, built once: a statement built per call is compiled from its cache key each time, which
# the profile of the mixed load put above the statements' own work (`python -m benchmarks.profile_serve`)
_KEY = (_TABLE.c.id == bindparam("key_id")) & (_TABLE.c.namespace == bindparam("key_namespace"))
_ONE = select(*_COLUMNS).where(_KEY)
_ONE_LOCKED = _ONE.with_for_update()
_CREATE = insert(_TABLE)
_UPDATE = update(_TABLE).where(_KEY)  # SET: the columns of the parameters it is given


def _key(namespace: str, session_id: str) -> dict[str, str]:
    return {"key_id": session_id, "key_namespace": namespace}


class SessionRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def create(self, session: LiveSession) -> None:
        with self.db.writes() as conn:
            conn.execute(_CREATE, {name: getattr(session, name) for name in _FIELDS})

    def get(self, namespace: str, session_id: str) -> LiveSession | None:
        with self.db.reads() as conn:
            row = conn.execute(_ONE, _key(namespace, session_id)).first()
        return None if row is None else _live(row)

    @contextmanager
    def editing(self, namespace: str, session_id: str) -> Iterator[LiveSession | None]:
        """The session locked for update (None when there is none); what the caller changes is written back when
        the block ends, in the same transaction (an exception writes nothing). Assign new values; a list or dict
        changed in place is not seen."""
        with self.db.writes() as conn:
            row = conn.execute(_ONE_LOCKED, _key(namespace, session_id)).first()
            live = None if row is None else _live(row)
            yield live
            if row is not None and live is not None:
                changed = {name: getattr(live, name) for name, before in zip(_FIELDS, row, strict=True)
                           if getattr(live, name) is not before}
                changed.pop("id", None)  # the key stays
                changed.pop("namespace", None)
                if changed:
                    conn.execute(_UPDATE, {**changed, **_key(namespace, session_id)})

    def recent(self, namespace: str, *, active_after: datetime, limit: int) -> list[LiveSession]:
        """The namespace's sessions, most recently active first: finished ones, and open ones active after
        `active_after`."""
        with self.db.reads() as conn:
            return [_live(r) for r in conn.execute(
                select(*_COLUMNS)
                .where(_TABLE.c.namespace == namespace,
                       or_(_TABLE.c.status != "open", _TABLE.c.updated_at >= active_after))
                .order_by(_TABLE.c.updated_at.desc(), _TABLE.c.id).limit(limit))]

    def delete_idle(self, *, idle_before: datetime) -> tuple[list[str], int]:
        """Delete sessions not updated since `idle_before`: their ids, and how many rows went."""
        with self.db.writes() as conn:
            gone = list(conn.scalars(select(_TABLE.c.id).where(_TABLE.c.updated_at < idle_before)))
            n = 0
            if gone:
                n = conn.execute(delete(_TABLE).where(_TABLE.c.id.in_(gone))).rowcount
        return gone, n
