"""The pgvector backend's approximate index outside the backend: `webcoach db index` builds it on demand (and says
what is wrong where it cannot), and migration 0008 hands the index over to the backend (drops 0007's HNSW index;
its downgrade makes it again)."""

from __future__ import annotations

import numpy as np
from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from condenser import Step, Trajectory, condense
from ems_service.cli import app
from ems_service.db import upgrade
from ems_service.index.pgvector_schema import COLUMN, HNSW_INDEX, IVF_INDEX, index_state


def _kinds(url: str) -> dict:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return index_state(conn).kinds
    finally:
        engine.dispose()


def test_db_index_builds_the_kind_asked_for_and_replaces_the_other(pgvector_url, tmp_path, monkeypatch):
    from ems_service.config import Settings
    from ems_service.index import build_backend
    from ems_service.repositories import Database, EpisodeRepository, IndexFeed

    upgrade(pgvector_url)
    db = Database(pgvector_url)
    episodes = EpisodeRepository(db)
    feed = IndexFeed(db, episodes)
    settings = Settings(database_url=pgvector_url, data_dir=tmp_path, _env_file=None, vector={"backend": "pgvector"})
    build_backend(settings, feed, model="m", dimension=384)  # the feed now writes the vector column
    rng = np.random.default_rng(1)
    vecs = rng.normal(size=(2500, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    eps = [condense(Trajectory(task=f"run {i}", steps=[Step(action="click[1]")]), namespace="ns") for i in range(2500)]
    episodes.insert(eps, vecs, "m")
    db.close()
    monkeypatch.setenv("EMS_DATABASE_URL", pgvector_url)
    monkeypatch.setenv("EMS_DATA_DIR", str(tmp_path))
    runner = CliRunner()
    assert _kinds(pgvector_url) == {}
    result = runner.invoke(app, ["db", "index"])
    assert result.exit_code == 0, result.output
    assert "ivfflat index built over ~2,500 rows, 5 lists" in " ".join(result.output.split())
    assert _kinds(pgvector_url) == {IVF_INDEX: 5}
    result = runner.invoke(app, ["db", "index", "--kind", "hnsw"])
    assert result.exit_code == 0, result.output
    assert _kinds(pgvector_url) == {HNSW_INDEX: None}
    result = runner.invoke(app, ["db", "index", "--lists", "12"])
    assert result.exit_code == 0 and _kinds(pgvector_url) == {IVF_INDEX: 12}
    result = runner.invoke(app, ["db", "index", "--kind", "annoy"])
    assert result.exit_code == 2 and "--kind must be ivfflat or hnsw, not 'annoy'" in result.output


def test_db_index_says_what_is_wrong_on_sqlite(tmp_path, monkeypatch):
    monkeypatch.setenv("EMS_DATABASE_URL", f"sqlite:///{tmp_path / 'e.db'}")
    monkeypatch.setenv("EMS_DATA_DIR", str(tmp_path))
    result = CliRunner().invoke(app, ["db", "index"])
    assert result.exit_code == 2 and "EMS_DATABASE_URL must be PostgreSQL" in result.output


def test_migration_0008_hands_the_index_to_the_backend_and_back(pgvector_url):
    from alembic import command

    from ems_service.db import _alembic_config

    upgrade(pgvector_url, "0007")
    engine = create_engine(pgvector_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:  # what 0007 made before the index moved to the backend
            conn.execute(text(f"CREATE INDEX {HNSW_INDEX} ON episodes USING hnsw "
                              f"(({COLUMN}::halfvec(384)) halfvec_ip_ops)"))
        upgrade(pgvector_url)
        assert _kinds(pgvector_url) == {}
        command.downgrade(_alembic_config(pgvector_url), "0007")
        assert _kinds(pgvector_url) == {HNSW_INDEX: None}
    finally:
        engine.dispose()


def test_build_index_refuses_a_kind_or_lists_that_would_reach_the_ddl(tmp_path):
    import pytest

    from ems_service.index.pgvector_schema import build_index

    engine = create_engine(f"sqlite:///{tmp_path / 'never.db'}")  # refused before any connection
    for kind, lists in (("ivfflat USING hnsw", None), ("IVFFLAT", None), ("ivfflat", 0), ("ivfflat", 40_000)):
        with pytest.raises(ValueError, match="ivfflat or hnsw|IVF lists must be"):
            build_index(engine, kind, lists=lists)
    assert not (tmp_path / "never.db").exists()


def test_a_setting_the_environment_gets_wrong_is_named_without_its_value(tmp_path, monkeypatch):
    """Any command: the variable and what is wrong, exit 2, no traceback, never the value (it may be a secret)."""
    monkeypatch.setenv("EMS_DATABASE_URL", f"sqlite:///{tmp_path / 'e.db'}")
    monkeypatch.setenv("EMS_DATA_DIR", str(tmp_path))
    for name, value, command in (("EMS_VECTOR__INDEX", "hnsw'-- sk-live-0123456789", ["db", "index"]),
                                 ("EMS_VECTOR__IVF_PROBES", "\uff14", ["stats"]),  # a full-width digit
                                 ("EMS_VECTOR__EXACT_BELOW", "sk-live-0123456789", ["db", "upgrade"])):
        monkeypatch.setenv(name, value)
        result = CliRunner().invoke(app, command)
        monkeypatch.delenv(name)
        out = " ".join(result.output.split())
        assert result.exit_code == 2 and name in out, (name, out)
        assert "sk-live" not in out and "Traceback" not in out and "\uff14" not in out
