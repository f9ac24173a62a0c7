"""The coach's ranking read, (task, domain) by id: remembered in process, forgotten with the deleted rows."""

from __future__ import annotations

import numpy as np
from sqlalchemy import event

from condenser import Outcome, Step, Trajectory, condense
from ems_service.repositories import Database, EpisodeRepository


def _episode(task: str, domain: str) -> object:
    return condense(Trajectory(task=task, steps=[Step(action="click[1]")], outcome=Outcome(success=True),
                               domain=domain), namespace="ns")


def _vectors(n: int) -> np.ndarray:
    v = np.random.default_rng(n).normal(size=(n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_task_reads_are_remembered_per_namespace_and_a_deleted_id_reads_nothing(db_url):
    repo = EpisodeRepository(Database(db_url))
    reads: list[str] = []
    event.listen(repo.db.engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *a: reads.append(statement) if "episodes" in statement else None)
    try:
        episodes = [_episode(f"book a table for {n} people", "resy.com") for n in (2, 4, 6)]
        ids = repo.insert(episodes, _vectors(3), "m")
        want = {i: (e.task, "resy.com") for i, e in zip(ids, episodes, strict=True)}
        assert repo.tasks("ns", ids) == want
        before = len(reads)
        assert repo.tasks("ns", ids) == want
        assert len(reads) == before, "the second read went to the database"
        assert repo.tasks("another-tenant", ids) == {}  # remembered per namespace, never answered across

        # The newest row goes and another is stored: no database gives it the same id (SQLite's AUTOINCREMENT since
        # migration 0009: a vouch by id is for one run), and the deleted id reads nothing.
        assert repo.delete("ns", [ids[-1]], reason="api") == [ids[-1]]
        assert repo.tasks("ns", [ids[-1]]) == {}
        fresh = _episode("cancel a reservation", "opentable.com")
        new = repo.insert([fresh], _vectors(1), "m")
        assert new[0] > ids[-1] and repo.tasks("ns", [ids[-1]]) == {}
        assert repo.tasks("ns", [*ids[:2], *new]) == {ids[0]: want[ids[0]], ids[1]: want[ids[1]],
                                                      new[0]: ("cancel a reservation", "opentable.com")}
    finally:
        repo.db.close()
