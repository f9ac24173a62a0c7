"""Migrations build the schema the models expect, on SQLite and PostgreSQL, and downgrade cleanly."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from ems_service.db import head_revision, upgrade
from ems_service.tables import Base


def test_schema_matches_models(db_url):
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": False})
            assert ctx.get_current_revision() == head_revision()
            diff = compare_metadata(ctx, Base.metadata)
        assert diff == [], diff
    finally:
        engine.dispose()


def test_downgrade_and_upgrade_again(db_url):
    from alembic import command

    from ems_service.db import _alembic_config

    command.downgrade(_alembic_config(db_url), "base")
    engine = create_engine(db_url)
    try:
        assert not inspect(engine).has_table("episodes")
        upgrade(db_url)
        assert inspect(engine).has_table("episodes")
    finally:
        engine.dispose()
