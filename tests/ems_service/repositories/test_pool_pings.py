"""Pooled PostgreSQL connections are pinged only after PING_AFTER_IDLE_S idle: a dead idle one is replaced on
checkout, unseen; one that died within the window fails its call with a 503 and the next call gets a new one."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import text

from ems_service import db
from ems_service.errors import StoreUnavailable
from ems_service.repositories import Database
from tests.conftest import _postgres_url


@pytest.fixture
def database(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(db, "PING_AFTER_IDLE_S", request.param)
    database = Database(_postgres_url())
    yield database
    database.close()


def _backend_pid(database: Database) -> int:
    with database.session() as s:
        return int(s.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _terminate(pid: int) -> None:
    other = Database(_postgres_url())
    try:
        with other.session() as s:
            assert s.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid}).scalar_one()
    finally:
        other.close()


@pytest.mark.parametrize("database", [1.0], indirect=True)
def test_a_connection_used_a_moment_ago_is_not_pinged_and_an_idle_one_is(database, monkeypatch):
    pings: list[int] = []
    real = database.engine.dialect.do_ping
    monkeypatch.setattr(database.engine.dialect, "do_ping", lambda conn: pings.append(1) or real(conn))
    _backend_pid(database)
    first = len(pings)  # a new connection is pinged on its first checkout
    for _ in range(5):
        _backend_pid(database)
    assert len(pings) == first
    time.sleep(1.1)
    _backend_pid(database)
    assert len(pings) == first + 1


@pytest.mark.parametrize("database", [0.2], indirect=True)
def test_a_connection_that_died_idle_is_replaced_unseen(database):
    pid = _backend_pid(database)
    _terminate(pid)
    time.sleep(0.4)  # idle past the window: the checkout pings, finds it dead, connects anew
    assert _backend_pid(database) != pid


@pytest.mark.parametrize("database", [60.0], indirect=True)
def test_a_connection_that_died_within_the_window_fails_one_call_with_a_503(database):
    pid = _backend_pid(database)
    _terminate(pid)
    with pytest.raises(StoreUnavailable):  # not pinged: its statement meets the closed socket
        _backend_pid(database)
    assert _backend_pid(database) != pid  # the pool was discarded: the next call connects anew
