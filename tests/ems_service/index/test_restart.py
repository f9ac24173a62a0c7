"""Restart: the index comes back from its snapshot (or stored vectors), never by re-embedding."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import select

from ems_service import Runtime
from ems_service.dataset import to_trajectory
from ems_service.index.faiss import snapshot_path
from ems_service.index.faiss.snapshot import files
from ems_service.tables import EpisodeRecord
from tests.conftest import dev_records

QUERIES = ["add a gift card to the cart", "find flights to New York", "search for jobs", "book a hotel room"]

pytestmark = pytest.mark.faiss  # snapshots and rebuilds of the FAISS backend


def _search_all(client) -> list[list[tuple[int, float]]]:
    out = []
    for q in QUERIES:
        res = client.post("/v1/search", json={"text": q, "k": 10}).json()["results"]
        out.append([(r["id"], round(r["similarity"], 5)) for r in res])
    return out


def _table_ids(rt: Runtime) -> set[int]:
    with rt.db.session() as s:
        return set(s.scalars(select(EpisodeRecord.id).where(EpisodeRecord.namespace == "default")))


def test_restart_from_snapshot_and_rebuild(make_client, settings, embedder):
    records = dev_records("webcanvas.jsonl", 60) + dev_records("online_mind2web_abp.jsonl", 30)
    with make_client(settings) as client:
        client.post("/v1/episodes:batch", json={"episodes": [to_trajectory(r).model_dump(mode="json") for r in records]})
        before = _search_all(client)
    path = files(snapshot_path(settings.data_dir, "default"))[1]  # the vectors (an exact index has no .faiss)
    assert path.exists()

    for damage in (None, "delete", "corrupt"):
        if damage == "delete":
            path.unlink()
        elif damage == "corrupt":
            path.write_bytes(path.read_bytes()[:100])
        calls = embedder.calls
        with make_client(settings) as client:
            assert embedder.calls == calls, "start-up must not embed"
            rt = client.app.state.runtime
            assert rt.vectors.last_start["default"].startswith("snapshot" if damage is None else "rebuilt")
            assert _search_all(client) == before


def test_catch_up_after_a_crash(settings, embedder):
    rt = Runtime(settings, embedder=embedder).start(background=False)
    trajs = [to_trajectory(r) for r in dev_records("mind2web_demos.jsonl", 40)]
    first = rt.ingest.ingest(namespace="default", trajectories=trajs[:20])
    rt.vectors.snapshot()
    rt.ingest.ingest(namespace="default", trajectories=trajs[20:])
    rt.ingest.delete(namespace="default", episode_id=first[0].id)
    rt.ingest.delete(namespace="default", episode_id=first[1].id)
    rt.db.close()  # no final snapshot: as if the process died here

    calls = embedder.calls
    rt2 = Runtime(settings, embedder=embedder).start(background=False)
    try:
        assert embedder.calls == calls
        assert "snapshot + 20 new, 2 deleted" == rt2.vectors.last_start["default"]
        assert rt2.vectors.namespace("default").ids() == _table_ids(rt2)
    finally:
        rt2.close()


def test_large_namespace_switches_to_ivf_and_restarts_from_it(settings, embedder):
    """Above `approx_above` the service builds the IVF-SQ8 index in the background and snapshots it."""
    settings.index.approx_above = 150
    settings.index.exact_subset = 0  # every filtered search goes through the IVF with a selector
    rt = Runtime(settings, embedder=embedder).start(background=False)
    trajs = [to_trajectory(r) for r in dev_records("webcanvas.jsonl", 120) + dev_records("mind2web_demos.jsonl", 120)]
    try:
        index = rt.vectors.namespace("default")
        index.approx = replace(index.approx, above=0)  # hold the switch back to get exact answers first
        rt.ingest.ingest(namespace="default", trajectories=trajs)
        exact = {q: [h.episode.id for h in rt.retrieval.search(namespace="default", text=q, k=5)] for q in QUERIES}
        assert index.kind == "flat" and not index.wants_build()
        index.approx = replace(index.approx, above=150)
        assert index.wants_build()
        rt.vectors.maintain()  # starts the build in the background
        index.wait_for_build(timeout=60)
        assert index.kind == "ivf_sq8" and rt.catalog.stats(namespace="default")["index_type"].startswith("IndexIVF")
        approx = {q: [h.episode.id for h in rt.retrieval.search(namespace="default", text=q, k=5)] for q in QUERIES}
        overlap = sum(len(set(exact[q]) & set(approx[q])) for q in QUERIES) / sum(map(len, exact.values()))
        assert overlap >= 0.9
        victim = approx[QUERIES[0]][0]
        rt.ingest.delete(namespace="default", episode_id=victim)
        assert victim not in [r.episode.id for r in rt.retrieval.search(namespace="default", text=QUERIES[0], k=5)]
        rt.vectors.snapshot(force=True)
    finally:
        rt.close()
    calls = embedder.calls
    rt2 = Runtime(settings, embedder=embedder).start(background=False)
    try:
        assert embedder.calls == calls
        index = rt2.vectors.namespace("default")
        assert index.kind == "ivf_sq8" and rt2.vectors.last_start["default"].startswith("snapshot")
        assert index.ids() == _table_ids(rt2)
    finally:
        rt2.close()
