"""Eviction and dedup invariants: after any sequence of ingest/delete/evict, index ids == table ids <= capacity."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hsettings
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from sqlalchemy import select

from condenser import Trajectory
from ems_service import Runtime, Settings
from ems_service.tables import EpisodeRecord


def traj(n: int, *, domain: str = "shop.example.com") -> Trajectory:
    return Trajectory.model_validate(
        {"task": f"task number {n}", "start_url": f"https://{domain}/", "steps": [{"action": f"click[{n}]"}],
         "outcome": {"success": n % 2 == 0}}
    )


def table_ids(rt: Runtime, ns: str = "default") -> set[int]:
    with rt.db.session() as s:
        return set(s.scalars(select(EpisodeRecord.id).where(EpisodeRecord.namespace == ns)))


def test_fifo_evicts_oldest_batch(settings: Settings, embedder):
    settings.index.capacity = 10
    settings.index.evict_fraction = 0.3
    rt = Runtime(settings, embedder=embedder).start(background=False)
    try:
        ids = [r.id for r in rt.ingest.ingest(namespace="default", trajectories=[traj(i) for i in range(10)])]
        assert table_ids(rt) == set(ids)
        new = rt.ingest.ingest(namespace="default", trajectories=[traj(10)])[0].id
        remaining = table_ids(rt)
        assert remaining == set(ids[3:]) | {new}  # 3 oldest evicted (30% of capacity)
        assert rt.vectors.ids("default") == remaining
        assert rt.catalog.stats(namespace="default")["evicted"] == 3
    finally:
        rt.close()


def test_lru_keeps_recently_retrieved(settings: Settings, embedder):
    settings.index.capacity = 6
    settings.index.evict_fraction = 0.5
    settings.index.eviction_policy = "lru"
    rt = Runtime(settings, embedder=embedder).start(background=False)
    try:
        ids = [r.id for r in rt.ingest.ingest(namespace="default", trajectories=[traj(i) for i in range(6)])]
        hits = rt.retrieval.search(namespace="default", text="task number 0", k=1)
        assert hits[0].episode.id == ids[0]
        rt.ingest.ingest(namespace="default", trajectories=[traj(6)])
        remaining = table_ids(rt)
        assert ids[0] in remaining, "the retrieved (oldest) episode survives LRU"
        assert len(remaining) == 4
    finally:
        rt.close()


class MemoryMachine(RuleBasedStateMachine):
    """Random ingest / repeat / delete sequences against the real store, index and embedder."""

    rt: Runtime
    capacity = 8

    def __init__(self) -> None:
        super().__init__()
        self.counter = 0
        self.known: list[int] = []
        self.rt.vectors.count("default")

    @rule(n=st.integers(1, 5))
    def ingest_new(self, n: int) -> None:
        batch = [traj(self.counter + i) for i in range(n)]
        self.counter += n
        res = self.rt.ingest.ingest(namespace="default", trajectories=batch)
        assert all(not r.deduplicated for r in res)
        self.known += [r.id for r in res]

    @rule(data=st.data())
    def repeat_post(self, data) -> None:
        if not self.counter:
            return
        n = data.draw(st.integers(0, self.counter - 1))
        res = self.rt.ingest.ingest(namespace="default", trajectories=[traj(n)])[0]
        if res.deduplicated:
            assert res.id in table_ids(self.rt)

    @rule(data=st.data())
    def delete_one(self, data) -> None:
        ids = sorted(table_ids(self.rt))
        if ids:
            victim = data.draw(st.sampled_from(ids))
            self.rt.ingest.delete(namespace="default", episode_id=victim)

    @invariant()
    def index_matches_table(self) -> None:
        ids = table_ids(self.rt)
        assert self.rt.vectors.ids("default") == ids
        assert len(ids) <= self.capacity


@pytest.mark.slow
def test_state_machine(db_url, tmp_path, embedder):
    from hypothesis.stateful import run_state_machine_as_test

    from ems_service.db import upgrade
    from tests.pgvector_server import reset_schema

    n = {"i": 0}

    class Machine(MemoryMachine):
        def __init__(self) -> None:
            n["i"] += 1
            if db_url.startswith("sqlite"):
                name = "sm{}.db".format(n["i"])
                url = f"sqlite:///{tmp_path / name}"
            else:
                reset_schema(db_url)
                url = db_url
            upgrade(url)
            s = Settings(database_url=url, data_dir=tmp_path / f"d{n['i']}", _env_file=None)
            s.index.capacity = self.capacity
            s.index.evict_fraction = 0.25
            type(self).rt = Runtime(s, embedder=embedder).start(background=False)
            super().__init__()

        def teardown(self) -> None:
            self.rt.close()

    run_state_machine_as_test(
        Machine,
        settings=hsettings(max_examples=12, stateful_step_count=12, deadline=None,
                           suppress_health_check=list(HealthCheck)),
    )
