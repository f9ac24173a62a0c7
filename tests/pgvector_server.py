"""PostgreSQL with pgvector for the tests: a server of our own (ems_service.localpg) or EMS_TEST_PGVECTOR_URL.

`pgvector_url` is a database whose public schema is reset for each test (the migrations then create the vector
extension). With EMS_TEST_PGVECTOR_URL set (CI starts one server with `webcoach pg start`) the tests only
reset or create databases on it; without it the session starts its own server on a free loopback port and
stops it at the end. `pg_replica` and `pg_shards` always start servers of their own (once per session), only
for the tests that ask for them. Nothing here skips: a server that cannot start is an error.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from ems_service.localpg import LocalPostgres, free_port


@dataclass(frozen=True)
class Shards:
    """A coordinator and its shard nodes, each with an empty database `ems`."""

    coordinator: LocalPostgres
    shards: list[LocalPostgres]


def _base_dir() -> Path:
    # under /tmp, not pytest's tmp dir: as root the server runs as postgres, who cannot enter /tmp/pytest-of-root
    base = Path(tempfile.mkdtemp(prefix="webcoach-pg-", dir="/tmp"))
    base.chmod(0o755)
    return base


@pytest.fixture(scope="session")
def _pg_dirs() -> Iterator[list[Path]]:
    made: list[Path] = []
    yield made
    for path in made:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def pg_dir(_pg_dirs: list[Path]) -> Path:
    """An empty folder the postgres user can reach, for a LocalPostgres of the test's own."""
    base = _base_dir()
    _pg_dirs.append(base)
    return base


def _servers(dirs: list[Path], names: list[str]) -> list[LocalPostgres]:
    base = _base_dir()
    dirs.append(base)
    return [LocalPostgres(base / name, free_port(), fsync=False) for name in names]


def _ensure_database(url: str) -> None:
    parsed = make_url(url)
    engine = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            if conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"),
                            {"n": parsed.database}).first() is None:
                conn.execute(text(f'CREATE DATABASE "{parsed.database}"'))
            if conn.execute(text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).first() is None:
                pytest.fail(f"the PostgreSQL at {parsed.render_as_string(hide_password=True)} has no pgvector")
    finally:
        engine.dispose()


@pytest.fixture(scope="session")
def pgvector_server(_pg_dirs: list[Path]) -> Iterator[str]:
    """URL of the test database on a PostgreSQL with pgvector (EMS_TEST_PGVECTOR_URL, or a server of our own)."""
    external = os.environ.get("EMS_TEST_PGVECTOR_URL")
    if external:
        _ensure_database(external)
        yield external
        return
    (server,) = _servers(_pg_dirs, ["pgvector"])
    server.start()
    try:
        yield server.create_database("ems_test")
    finally:
        server.stop()


def reset_schema(url: str) -> None:
    """An empty public schema in the PostgreSQL database at `url` (every PostgreSQL lane starts from one)."""
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
            conn.execute(text("CREATE SCHEMA public"))
    finally:
        engine.dispose()


@pytest.fixture
def pgvector_url(pgvector_server: str) -> str:
    """The pgvector test database with an empty public schema."""
    reset_schema(pgvector_server)
    return pgvector_server


@pytest.fixture(scope="session")
def pg_replica(_pg_dirs: list[Path]) -> Iterator[tuple[LocalPostgres, LocalPostgres]]:
    """A primary and its hot-standby streaming replica (database `ems` on both)."""
    (primary,) = _servers(_pg_dirs, ["primary"])
    primary.start()
    replica = None
    try:
        primary.create_database("ems")
        replica = primary.replica(primary.data_dir.parent / "replica", free_port())
        yield primary, replica
    finally:
        if replica is not None:
            replica.stop()
        primary.stop()


@pytest.fixture(scope="session")
def _shard_servers(_pg_dirs: list[Path]) -> Iterator[list[LocalPostgres]]:
    servers = _servers(_pg_dirs, ["coordinator", "shard0", "shard1"])
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def pg_shards(_shard_servers: list[LocalPostgres]) -> Shards:
    """A coordinator and two shard nodes for sharding over postgres_fdw: the servers start once per session, the
    database `ems` on each is new for every test (each test shards the migrated tables its own way)."""
    for server in _shard_servers:
        engine = create_engine(server.url(), isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                conn.execute(text("DROP DATABASE IF EXISTS ems WITH (FORCE)"))
        finally:
            engine.dispose()
        server.create_database("ems")
    return Shards(coordinator=_shard_servers[0], shards=_shard_servers[1:])
