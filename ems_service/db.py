"""Engine creation and schema migration (Alembic is the only way the schema is made)."""

from __future__ import annotations

import importlib.util
import logging
import time
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DisconnectionError

from ems_service.errors import NotReady

logger = logging.getLogger(__name__)


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite gets WAL, a busy timeout and its parent folder created."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn, _record) -> None:  # noqa: ANN001 - DBAPI connection
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    engine = create_engine(url, pool_size=10, max_overflow=20)
    _ping_after_idle(engine)
    return engine


PING_AFTER_IDLE_S = 1.0


def _ping_after_idle(engine: Engine) -> None:
    """SQLAlchemy's pre-ping, but only for a pooled connection idle for more than PING_AFTER_IDLE_S: a ping is a
    round trip before every statement's transaction (about 1 ms a call on a loaded 2-core machine), and a connection
    used a moment ago is almost always alive. One that died within that second (a restarted server) fails its
    statement with a disconnect: SQLAlchemy then discards every pooled connection and that request gets a 503, as
    any request does while the database is away; the next takes a new connection."""

    @event.listens_for(engine, "checkin")
    def _used(_dbapi_conn, record) -> None:  # noqa: ANN001 - DBAPI connection, pool record
        record.info["used_at"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _ping(dbapi_conn, record, _proxy) -> None:  # noqa: ANN001 - DBAPI connection, pool record, proxy
        if time.monotonic() - record.info.get("used_at", float("-inf")) <= PING_AFTER_IDLE_S:
            return
        try:
            engine.dialect.do_ping(dbapi_conn)
        except Exception as exc:  # the pool replaces the connection and tries again
            raise DisconnectionError(f"stale pooled connection: {type(exc).__name__}") from exc


def migrations_dir() -> Path:
    """Folder of the Alembic scripts (the `migrations` package), found without importing it."""
    spec = importlib.util.find_spec("migrations")
    if spec is None or not spec.submodule_search_locations:
        raise NotReady("the migrations package is not installed")
    return Path(list(spec.submodule_search_locations)[0])


def _alembic_config(url: str):  # noqa: ANN202 - alembic.config.Config
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    """Apply the migrations to `url` up to `revision`."""
    from alembic import command

    make_engine(url).dispose()  # creates the SQLite folder
    command.upgrade(_alembic_config(url), revision)
    logger.info("database upgraded to %s", revision)


def head_revision() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config("sqlite://")).get_current_head()


def check_schema(engine: Engine) -> None:
    """Raise NotReady unless the database is at the migrations' head."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        current = MigrationContext.configure(conn).get_current_revision()
        has_table = inspect(conn).has_table("episodes")
    if not has_table or current != head_revision():
        raise NotReady(
            f"database schema is at {current or 'nothing'}, expected {head_revision()}: run `webcoach db upgrade`"
        )
