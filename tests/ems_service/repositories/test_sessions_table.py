"""The sessions table read and written with Core statements: a round trip keeps every field, `editing` writes back
exactly what was assigned (in one transaction: an exception writes nothing), `recent` and `delete_idle` pick the
right rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import event

from ems_service.repositories import Database, LiveSession, SessionRepository, aware

T0 = datetime(2026, 12, 6, 8, 0, tzinfo=UTC)


def _session(sid: str, *, namespace: str = "ns", status: str = "open", at: datetime = T0) -> LiveSession:
    return LiveSession(id=sid, namespace=namespace, trajectory={"task": "book a table", "steps": [{"action": "click[1]"}]},
                       n_steps=1, status=status, advice_log=[[1, "wall:consent"]], last_guidance=None, episode_id=None,
                       created_at=at, updated_at=at)


def _normal(s: LiveSession) -> LiveSession:
    """Datetimes as aware UTC (SQLite hands back naive ones)."""
    return LiveSession(**{**s.__dict__, "created_at": aware(s.created_at), "updated_at": aware(s.updated_at)})


def test_a_session_round_trips_and_stays_in_its_namespace(db_url):
    repo = SessionRepository(Database(db_url))
    stored = _session("s-1")
    repo.create(stored)
    assert _normal(repo.get("ns", "s-1")) == stored
    assert repo.get("another-tenant", "s-1") is None
    assert repo.get("ns", "s-2") is None


def test_editing_writes_back_only_what_was_assigned(db_url):
    repo = SessionRepository(Database(db_url))
    repo.create(_session("s-1"))
    updates: list[str] = []
    event.listen(repo.db.engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *a: updates.append(statement) if statement.startswith("UPDATE") else None)
    with repo.editing("ns", "s-1") as live:
        assert live is not None
        live.n_steps, live.status, live.last_guidance = 3, "finished", {"n_steps": 3, "trace": []}
        live.updated_at = T0 + timedelta(minutes=5)
    assert len(updates) == 1
    written = updates[0].split(" WHERE")[0]
    assert all(name in written for name in ("n_steps", "status", "last_guidance", "updated_at"))
    assert all(name not in written for name in ("trajectory", "advice_log", "created_at", "namespace"))
    got = _normal(repo.get("ns", "s-1"))
    assert (got.n_steps, got.status, got.last_guidance) == (3, "finished", {"n_steps": 3, "trace": []})
    assert got.updated_at == T0 + timedelta(minutes=5) and got.trajectory == _session("s-1").trajectory

    with repo.editing("ns", "s-1") as live:  # nothing assigned: no UPDATE at all
        pass
    assert len(updates) == 1

    with repo.editing("other", "s-1") as live:  # another namespace's session is not there to edit
        assert live is None


def test_an_exception_inside_editing_writes_nothing(db_url):
    repo = SessionRepository(Database(db_url))
    repo.create(_session("s-1"))
    with pytest.raises(RuntimeError), repo.editing("ns", "s-1") as live:
        assert live is not None
        live.n_steps = 9
        raise RuntimeError("the coach failed")
    assert repo.get("ns", "s-1").n_steps == 1


def test_recent_and_delete_idle_pick_the_right_rows(db_url):
    repo = SessionRepository(Database(db_url))
    repo.create(_session("old-open", at=T0 - timedelta(hours=2)))
    repo.create(_session("old-done", status="finished", at=T0 - timedelta(hours=3)))
    repo.create(_session("new-open", at=T0))
    repo.create(_session("elsewhere", namespace="other", at=T0))
    recent = repo.recent("ns", active_after=T0 - timedelta(hours=1), limit=10)
    assert [s.id for s in recent] == ["new-open", "old-done"]  # most recent first; an idle open one is left out
    assert [s.id for s in repo.recent("ns", active_after=T0 - timedelta(hours=1), limit=1)] == ["new-open"]
    gone, n = repo.delete_idle(idle_before=T0 - timedelta(hours=1))
    assert sorted(gone) == ["old-done", "old-open"] and n == 2
    assert repo.get("ns", "old-open") is None and repo.get("ns", "new-open") is not None
    assert repo.get("other", "elsewhere") is not None
