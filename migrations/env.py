"""Alembic environment: runs migrations against the URL set in the config (or the service's EMS_DATABASE_URL)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool

from ems_service.config import Settings
from ems_service.index.pgvector_schema import include_object
from ems_service.tables import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    """The URL `webcoach db upgrade` set, else the service's own setting (a bare `alembic upgrade head`)."""
    return config.get_main_option("sqlalchemy.url") or Settings().database_url


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True, render_as_batch=True,
                      include_object=include_object)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = create_engine(_url(), poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True,
                          include_object=include_object)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
