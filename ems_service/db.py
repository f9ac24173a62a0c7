"""Engine creation and schema migration (Alembic is the only way the schema is made)."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, inspect
from sqlalchemy.engine import make_url

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
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


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
