"""Shared fixtures: the real MiniLM model (once per session), real databases built by the migrations."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ems_service import Embedder, Settings
from ems_service.dataset import DEV_FILES as DEV_FILES  # the file names, for the modules importing them from here
from ems_service.dataset import dev_data_dir
from ems_service.db import upgrade
from tests.pgvector_server import reset_schema

pytest_plugins = ["tests.pgvector_server"]

ROOT = Path(__file__).resolve().parents[1]
DATA = dev_data_dir()  # datasets/trajectories, or $EMS_DEV_DATA
PG_URL = os.environ.get("EMS_TEST_DATABASE_URL")
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def dev_records(name: str, limit: int | None = None) -> list[dict]:
    """Records of a dev trajectories file (the first `limit` lines)."""
    out = []
    with open(DATA / name, encoding="utf-8") as fh:
        for line in fh:
            out.append(json.loads(line))
            if limit is not None and len(out) >= limit:
                break
    return out


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return Embedder()


def _postgres_url() -> str:
    if not PG_URL:
        if IN_CI:
            pytest.fail("EMS_TEST_DATABASE_URL is not set in CI: the PostgreSQL lane must run")
        pytest.skip("EMS_TEST_DATABASE_URL not set (PostgreSQL lane runs in CI)")
    try:
        reset_schema(PG_URL)
    except Exception as exc:  # noqa: BLE001
        if IN_CI:
            pytest.fail(f"PostgreSQL at EMS_TEST_DATABASE_URL is not reachable: {exc}")
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    return PG_URL


@pytest.fixture(params=["sqlite", "postgresql", "pgvector"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh database built by the Alembic migrations: a new SQLite file or a reset PostgreSQL schema (both with
    the FAISS backend), or a reset PostgreSQL with pgvector and EMS_VECTOR__BACKEND=pgvector for every Settings the
    test makes (tests marked `faiss` are not run there: they test the FAISS backend's own snapshots and files)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'ems.db'}"
    elif request.param == "postgresql":
        url = _postgres_url()
    else:
        url = request.getfixturevalue("pgvector_url")
        monkeypatch.setenv("EMS_VECTOR__BACKEND", "pgvector")
    upgrade(url)
    yield url


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect (not skip) the pgvector lane of tests marked `faiss`."""
    keep, dropped = [], []
    for item in items:
        lane = getattr(item, "callspec", None) and item.callspec.params.get("db_url")
        (dropped if lane == "pgvector" and item.get_closest_marker("faiss") else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return Settings(database_url=db_url, data_dir=tmp_path / "data", _env_file=None)


@pytest.fixture
def make_client(embedder: Embedder):
    """Build a TestClient for given settings (lifespan runs on enter)."""
    from fastapi.testclient import TestClient

    from ems_service import create_app

    def make(settings: Settings) -> TestClient:
        return TestClient(create_app(settings, embedder=embedder))

    return make


@pytest.fixture
def client(make_client, settings: Settings):
    with make_client(settings) as c:
        yield c
