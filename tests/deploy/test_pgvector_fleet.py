"""The pgvector backend past one machine: a read-only service replica on a streaming standby, and namespaces
hash-partitioned over two PostgreSQL nodes (declarative partitions over postgres_fdw)."""

from __future__ import annotations

import statistics
import time

from fastapi.testclient import TestClient

from ems_service import Settings, create_app
from ems_service.db import upgrade

ADMIN_KEY = "fleet-admin-key-0123456789abcdef"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


def _settings(url: str, tmp, name: str) -> Settings:
    return Settings(database_url=url, data_dir=tmp / name, admin_key=ADMIN_KEY, _env_file=None,
                    vector={"backend": "pgvector"})


def _run(i: int, word: str = "teapot") -> dict:
    return {"task": f"Fleet check {i}: order the green {word} number {i}", "start_url": "https://tea.example.com",
            "steps": [{"action": f"click[{i}]", "url": "https://tea.example.com/cart"}],
            "outcome": {"success": i % 2 == 0}}


def test_a_standby_replica_searches_the_primarys_writes_within_a_second_and_refuses_writes(
        pg_replica, embedder, tmp_path):
    primary, standby = pg_replica
    upgrade(primary.url("ems"))
    writes = TestClient(create_app(_settings(primary.url("ems"), tmp_path, "a"), embedder=embedder))
    reads = TestClient(create_app(_settings(standby.url("ems"), tmp_path, "b"), embedder=embedder))
    with writes, reads:
        assert reads.app.state.runtime.read_only and not writes.app.state.runtime.read_only
        delays = []
        for i in range(30):
            run = _run(i)
            reads.post("/v1/search", headers=ADMIN, json={"text": run["task"], "k": 1})  # query vector cached
            made = writes.post("/v1/episodes", headers=ADMIN, json=run)
            assert made.status_code == 201, made.text
            committed = time.perf_counter()
            while True:
                hits = reads.post("/v1/search", headers=ADMIN, json={"text": run["task"], "k": 1}).json()["results"]
                if hits and hits[0]["id"] == made.json()["id"]:
                    delays.append(time.perf_counter() - committed)
                    break
                assert time.perf_counter() - committed < 1.0, "not searchable on the replica within 1 s"
                time.sleep(0.002)
        p50 = statistics.median(delays)
        p95 = sorted(delays)[int(0.95 * len(delays)) - 1]
        print(f"standby propagation over {len(delays)} writes: p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms")
        assert p95 < 1.0

        refused = reads.post("/v1/episodes", headers=ADMIN, json=_run(99))
        assert refused.status_code == 405 and "read-only" in refused.json()["detail"], refused.text
        assert reads.delete(f"/v1/episodes/{made.json()['id']}", headers=ADMIN).status_code == 405
        partial = {k: _run(3)[k] for k in ("task", "steps", "start_url")}
        coached = reads.post("/v1/coach", headers=ADMIN, json={"trajectory": partial})
        assert coached.status_code == 200, coached.text
        stats = reads.get("/v1/stats", headers=ADMIN).json()
        assert stats["vector_backend"] == "pgvector" and stats["index_bytes"] == 0 and stats["index_size"] == 30


def test_namespaces_sharded_over_two_nodes_give_the_single_node_results(pg_shards, pgvector_url, embedder, tmp_path):
    from sqlalchemy import create_engine, text

    from ems_service.localpg import add_shards, shard_table

    upgrade(pgvector_url)
    for node in pg_shards.shards:
        upgrade(node.url("ems"))
    coordinator = pg_shards.coordinator.url("ems")
    upgrade(coordinator)
    servers = add_shards(coordinator, [node.url("ems") for node in pg_shards.shards])
    shard_table(coordinator, "episodes", servers)

    single = TestClient(create_app(_settings(pgvector_url, tmp_path, "single"), embedder=embedder))
    sharded = TestClient(create_app(_settings(coordinator, tmp_path, "sharded"), embedder=embedder))
    namespaces = [f"tenant-{n}" for n in range(6)]
    with single, sharded:
        keys = {}
        for client in (single, sharded):
            for ns in namespaces:
                made = client.post("/v1/admin/keys", headers=ADMIN, json={"namespace": ns, "role": "writer"})
                keys[(id(client), ns)] = {"Authorization": f"Bearer {made.json()['key']}"}
        for client in (single, sharded):
            for ns in namespaces:
                batch = [_run(i, word=ns) for i in range(12)]
                res = client.post("/v1/episodes:batch", headers=keys[(id(client), ns)], json={"episodes": batch})
                assert res.status_code == 200, res.text
        for ns in namespaces:
            for q in ("order the green teapot", f"green {ns} number 3"):
                body = {"text": q, "k": 5, "success": True}
                a = single.post("/v1/search", headers=keys[(id(single), ns)], json=body).json()["results"]
                b = sharded.post("/v1/search", headers=keys[(id(sharded), ns)], json=body).json()["results"]
                assert [(h["task"], round(h["similarity"], 5)) for h in a] == \
                       [(h["task"], round(h["similarity"], 5)) for h in b]
                assert a and all(ns in h["task"] for h in b)

    # every namespace's rows live on exactly one shard, and its query touches one foreign table
    per_shard = []
    for node in pg_shards.shards:
        engine = create_engine(node.url("ems"))
        with engine.connect() as conn:
            per_shard.append(set(conn.scalars(text("SELECT DISTINCT namespace FROM episodes"))))
        engine.dispose()
    assert per_shard[0] | per_shard[1] >= set(namespaces) and not (per_shard[0] & per_shard[1])
    assert per_shard[0] and per_shard[1]
    engine = create_engine(coordinator)
    with engine.connect() as conn:
        probe = conn.execute(text("SELECT embedding_vec::text FROM episodes WHERE namespace = 'tenant-1' LIMIT 1")).scalar()
        plan = "\n".join(conn.scalars(text(
            "EXPLAIN VERBOSE SELECT id FROM episodes WHERE namespace = 'tenant-1' AND embedding_vec IS NOT NULL "
            "ORDER BY embedding_vec::halfvec(384) <#> CAST(:q AS halfvec(384)) LIMIT 5"), {"q": probe}))
    engine.dispose()
    scanned = [line for line in plan.splitlines() if "Foreign Scan on" in line]
    assert len(scanned) == 1, plan  # pruned to the namespace's shard
    assert "ORDER BY" in plan.split("Remote SQL:")[1], plan  # the distance ordering runs on the shard
