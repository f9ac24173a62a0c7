"""The database handle: engine, short transactions (driver errors translated once, here), cluster-wide try-locks."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from sqlalchemy import Connection, Engine, select, text
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from ems_service.db import make_engine
from ems_service.errors import ReadOnly, StoreUnavailable, ValidationFailed


def utcnow() -> datetime:
    return datetime.now(UTC)


def aware(value: datetime) -> datetime:
    """A UTC-aware datetime (SQLite hands back naive ones)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Database:
    """One engine per process; the repositories share it and open one short transaction per method."""

    def __init__(self, url: str, *, engine: Engine | None = None) -> None:
        self.url = url
        self.engine = engine or make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        # reads: PostgreSQL in autocommit (no BEGIN and COMMIT round trips); SQLite's driver opens no transaction
        # for a SELECT anyway, and switching its isolation level at each checkout and return doubled a read's time
        self._reader = self.engine if self.engine.dialect.name == "sqlite" else self.engine.execution_options(
            isolation_level="AUTOCOMMIT")
        self.read_only = False

    def detect_standby(self) -> bool:
        """Whether the database is a streaming standby (read-only): then events of reads are not recorded."""
        if self.engine.dialect.name == "postgresql":
            with self.session() as s:
                self.read_only = bool(s.execute(text("SELECT pg_is_in_recovery()")).scalar())
        return self.read_only

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction; database outages become StoreUnavailable (503), a standby's refusal ReadOnly (405)."""
        with self._translated(), self._sessions.begin() as session:
            yield session

    @contextmanager
    def writes(self) -> Iterator[Connection]:
        """A transaction on a plain connection, committed when the block ends (rolled back on an exception), errors
        translated as `session`'s: for single-table statements on a hot path, without the ORM's unit of work."""
        with self._translated(), self.engine.begin() as conn:
            yield conn

    @contextmanager
    def reads(self) -> Iterator[Connection]:
        """A connection for reads, errors translated as `session`'s: each statement reads its own snapshot, with no
        BEGIN and COMMIT round trips and no ORM session (the hot paths of single-statement reads: the pgvector
        search, the coach's candidates and their rows). Not for writes: it holds no transaction to group them."""
        with self._translated(), self._reader.connect() as conn:
            yield conn

    @contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except IntegrityError:
            raise
        except DBAPIError as exc:
            if getattr(exc.orig, "sqlstate", None) == "25006":  # read_only_sql_transaction: a standby
                raise ReadOnly("this replica's database is read-only: send writes to the primary") from exc
            if isinstance(exc, DataError):  # a value the database cannot hold: the request's fault, not an outage
                raise ValidationFailed(f"the database refused a value: {type(exc.orig).__name__ if exc.orig else exc}") from exc
            raise StoreUnavailable(f"database unavailable: {type(exc.orig).__name__ if exc.orig else exc}") from exc

    def ping(self) -> None:
        with self.session() as s:
            s.execute(select(1))

    @contextmanager
    def exclusive(self, name: str) -> Iterator[bool]:
        """A cluster-wide try-lock (PostgreSQL advisory lock); True when this process holds it."""
        if self.engine.dialect.name != "postgresql":
            yield True
            return
        key = int(hashlib.sha256(name.encode()).hexdigest()[:15], 16)
        with self.engine.connect() as conn:
            got = bool(conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar())
            try:
                yield got
            finally:
                if got:
                    conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
                conn.commit()
