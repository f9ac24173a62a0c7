"""benchmarks.peers' LanceDB and pgvector peers at a tiny size, on real LanceDB and a real PostgreSQL + pgvector:
each search gives 10 rows and they are the true top-10 by brute force (both search exactly at this size)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmarks import peers
from benchmarks.data import DevVectors, replicate
from benchmarks.peers import K, LanceDB, Pgvector, seed_rows
from condenser import condense
from ems_service import Embedder, Runtime, Settings
from ems_service.config import VectorSettings
from ems_service.dataset import read_jsonl
from ems_service.db import upgrade
from tests.conftest import DATA
from tests.pgvector_server import reset_schema

N = 2_000
TIE = 1e-5  # a query whose 10th and 11th true scores are closer than float32 rounding is not checked


@pytest.fixture(scope="module")
def runs() -> list:
    return [ln.trajectory for ln in read_jsonl(DATA / "webcanvas.jsonl") if ln.trajectory]


@pytest.fixture(scope="module")
def dev(embedder: Embedder, runs: list) -> DevVectors:
    """The webcanvas episodes' MiniLM vectors and 40 of their task texts as queries."""
    base = embedder.embed([condense(t).embed_text for t in runs]).astype(np.float32)
    return DevVectors(base, [], [], embedder.embed([t.task for t in runs[::10]]).astype(np.float32), [])


@pytest.fixture(scope="module")
def data(dev: DevVectors) -> tuple[np.ndarray, np.ndarray]:
    """N vectors replicated from them as the benchmark does, and the queries."""
    return replicate(dev.vectors, N, seed=1), dev.queries


def _check(peer, vectors: np.ndarray, queries: np.ndarray) -> int:
    """Every query: 10 positions, the exact top-10's; returns how many queries were checked (not near-ties)."""
    checked = 0
    for q in queries:
        scores = vectors.astype(np.float64) @ q.astype(np.float64)
        order = np.argsort(-scores)
        got = peer.positions(peer.search(q))
        assert len(got) == K
        if scores[order[K - 1]] - scores[order[K]] < TIE:
            continue
        assert set(got) == {int(i) for i in order[:K]}
        checked += 1
    return checked


def _load(peer, vectors: np.ndarray) -> None:
    for i in range(0, len(vectors), 700):  # chunks that do not divide N: positions carry across adds
        peer.add(vectors[i : i + 700])
    assert peer.n == len(vectors)
    peer.finish()


def test_lancedb_flat_search_is_the_exact_top10(data: tuple[np.ndarray, np.ndarray]) -> None:
    vectors, queries = data
    peer = LanceDB()
    try:
        _load(peer, vectors)
        assert peer.info()["index"] == "flat" and peer.table.list_indices() == []
        assert _check(peer, vectors, queries) >= len(queries) - 2
        res = peer.search(queries[0])  # cosine distances: 1 - the exact scores, best first
        exact = np.sort(1 - vectors @ queries[0])[:K]
        assert np.allclose(res["_distance"].to_numpy(), exact, atol=1e-4)
    finally:
        peer.close()


def test_lancedb_builds_its_default_index_from_index_above(data: tuple[np.ndarray, np.ndarray]) -> None:
    vectors, queries = data
    peer = LanceDB(index_above=N)
    try:
        _load(peer, vectors)
        assert peer.info()["index"] == "IVF_PQ"
        assert [str(ix.index_type) for ix in peer.table.list_indices()] == ["IvfPq"]
        found = [peer.positions(peer.search(q)) for q in queries]
        assert all(len(f) == K for f in found)
        truth = np.argsort(-(queries @ vectors.T), axis=1)[:, :K]
        recall = np.mean([len(set(f) & set(t.tolist())) / K for f, t in zip(found, truth, strict=True)])
        assert recall >= 0.5  # an approximate index over PQ codes: near, not exact
    finally:
        peer.close()


def test_searches_measures_flat_then_indexed(dev: DevVectors) -> None:
    """The benchmark's loop on LanceDB: a fresh table per size, latency, recall, and the IVF_PQ pass past
    `also_indexed_from` on the same table."""
    out = peers._searches(lambda n: LanceDB(also_indexed_from=N), dev, dev.queries, (N,), 60.0)
    r = out[str(N)]
    assert r["index"] == "flat" and r["n"] == len(dev.queries) and 0 < r["p50_ms"] <= r["p99_ms"]
    assert r["recall10"] >= 0.99  # exact, but for float32 near-ties at the 10th place
    assert r["with_ivf_pq"]["build_s"] >= 0 and 0.5 <= r["with_ivf_pq"]["recall10"] <= 1.0


def test_pgvector_peer_search_is_the_exact_top10(pgvector_url: str, embedder: Embedder, runs: list,
                                                 data: tuple[np.ndarray, np.ndarray], tmp_path: Path) -> None:
    url = pgvector_url
    upgrade(url)
    settings = Settings(database_url=url, data_dir=tmp_path / "seed", _env_file=None, vector={"backend": "pgvector"})
    rt = Runtime(settings, embedder=embedder).start(background=False)
    rt.ingest.ingest(namespace="default", trajectories=runs[:20])
    rt.close()
    seed = seed_rows(url)
    assert len(seed[1]) == 20
    reset_schema(url)  # the peer starts from an empty database, as in the benchmark
    vectors, queries = data
    peer = Pgvector(url, embedder, seed, tmp_path)
    try:
        _load(peer, vectors)
        assert peer.rt.vectors.count("default") == N
        # auto, the service's defaults: N rows are above exact_below, and 4 probes of N / 500 lists read them all
        assert f"exact when at most {VectorSettings().exact_below:,} rows" in peer.info()["search"]
        assert _check(peer, vectors, queries) >= len(queries) - 2
        hits = peer.search(queries[0])
        assert np.allclose([h.score for h in hits], np.sort(vectors @ queries[0])[::-1][:K], atol=1e-4)
        with peer.rt.db.engine.connect() as conn:
            from sqlalchemy import text

            assert conn.execute(text("SELECT count(*) FROM pg_indexes WHERE indexname = 'ix_episodes_embedding_ivfflat'"
                                     )).scalar() == 1  # the default index, built after the load
            assert conn.execute(text("SELECT count(DISTINCT trajectory_hash) FROM episodes")).scalar() == N
    finally:
        peer.close()


def test_headline_and_tables_carry_the_new_peers() -> None:
    """benchmarks.run's headline ratios and the peers' table take LanceDB's and pgvector's rows (on the committed
    results, with these peers' rows in place of its peers)."""
    import json

    from benchmarks.common import ROOT
    from benchmarks.run import headline, markdown

    out = json.loads((ROOT / "benchmarks" / "results" / "latest.json").read_text())
    lance = {"p50_ms": 12.0, "p95_ms": 13.0, "p99_ms": 15.0, "index": "flat", "recall10": 1.0,
             "with_ivf_pq": {"build_s": 3.0, "p50_ms": 1.5, "p95_ms": 1.6, "p99_ms": 1.7, "recall10": 0.9}}
    pg = {"p50_ms": 3.0, "p95_ms": 3.5, "p99_ms": 5.0, "index": "hnsw", "recall10": 0.99}
    out["peers"] = {"peers": {"lancedb": {"ingest_eps": 200.0, "search": {"10000": lance}},
                              "pgvector": {"ingest_eps": 100.0, "search": {"10000": pg}}}}
    ours = next(r for r in out["search"] if r["n"] == 10_000)["flat"]["search"]["p50_ms"]  # flat below 20k
    h = headline(out)
    assert h["peer_search_ratio"] == {"lancedb": round(12.0 / ours, 2), "pgvector": round(3.0 / ours, 2)}
    assert h["peer_ingest_ratio"] == {"lancedb": round(out["ingest"]["service_eps"] / 200.0, 2),
                                      "pgvector": round(out["ingest"]["service_eps"] / 100.0, 2)}
    out["headline"] = h
    table = markdown(out)
    assert ("| lancedb | 200.0 | 10000: 12.00 / 13.00 / 15.00 (flat, recall@10 1.0); IVF_PQ built in 3.0 s: "
            "1.50 / 1.60 / 1.70, recall@10 0.9 |") in table
    assert "| pgvector | 100.0 | 10000: 3.00 / 3.50 / 5.00 (hnsw, recall@10 0.99) |" in table
