"""Migrations build the schema the models expect, on SQLite and PostgreSQL, and downgrade cleanly."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from ems_service.db import head_revision, upgrade
from ems_service.index.pgvector_schema import COLUMN, HNSW_INDEX, IVF_INDEX, MISSING_INDEX, available, include_object
from ems_service.tables import Base


def test_schema_matches_models(db_url):
    """The models' schema, plus (on PostgreSQL with pgvector, only there) the vector column and the index of the rows
    still without a vector; no approximate index (the pgvector backend builds the configured kind once there are
    rows to train it: migration 0008 dropped the HNSW index 0007 made)."""
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": False, "include_object": include_object})
            assert ctx.get_current_revision() == head_revision()
            diff = compare_metadata(ctx, Base.metadata)
            columns = {c["name"] for c in inspect(conn).get_columns("episodes")}
            indexes = {i["name"] for i in inspect(conn).get_indexes("episodes")}
            has_pgvector = conn.dialect.name == "postgresql" and available(conn)
        assert diff == [], diff
        assert (COLUMN in columns) is has_pgvector and (MISSING_INDEX in indexes) is has_pgvector
        assert not indexes & {HNSW_INDEX, IVF_INDEX}
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


def test_episodes_stored_without_a_task_id_get_the_derived_one(db_url):
    from alembic import command
    from sqlalchemy import text

    from condenser import derive_task_id
    from ems_service.db import _alembic_config

    command.downgrade(_alembic_config(db_url), "0005")
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            for i, (task, task_id) in enumerate([("Find a CVS in Boston", None), ("Book a table", "mine")], start=1):
                conn.execute(text(
                    "INSERT INTO episodes (id, namespace, trajectory_hash, task, summary, embed_text, label_source, "
                    "trust, error_patterns, failure_categories, n_steps, actions, source, tags, embedding, embedding_model, "
                    "embedding_dim, trajectory, task_id, created_at, retrieval_count, seen_count) VALUES (:id, "
                    "'default', :h, :task, 's', 'e', 'benchmark', 0.9, '[]', '[]', 1, '[]', 'self', '{}', :emb, 'm', "
                    "1, :traj, :tid, CURRENT_TIMESTAMP, 0, 1)"),
                    {"id": i, "h": f"h{i}", "task": task, "emb": b"\0\0\0\0", "traj": b"x", "tid": task_id})
        upgrade(db_url)
        with engine.connect() as conn:
            got = dict(conn.execute(text("SELECT id, task_id FROM episodes ORDER BY id")).all())
        assert got == {1: derive_task_id("Find a CVS in Boston"), 2: "mine"}
    finally:
        engine.dispose()
