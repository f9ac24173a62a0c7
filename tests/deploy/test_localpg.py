"""The local PostgreSQL with pgvector (ems_service.localpg): start and stop by PID, pgvector and postgres_fdw, a
streaming replica (propagation measured), and namespaces sharded over postgres_fdw (routing and pruning)."""

from __future__ import annotations

import socket
import statistics
import time
from datetime import UTC, datetime

import numpy as np
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from ems_service.db import upgrade
from ems_service.index.pgvector_schema import COLUMN, DIMENSION
from ems_service.localpg import LocalPgError, LocalPostgres, add_shards, free_port, shard_table


def _vec(v: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6f}" for x in v) + "]"


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_starts_and_stops_by_pid(pg_dir):
    server = LocalPostgres(pg_dir / "data", free_port(), fsync=False)
    assert not server.running and server.pid is None
    server.start()
    pid = server.pid
    try:
        assert pid is not None and open(f"/proc/{pid}/comm").read().strip() == "postgres"
        engine = create_engine(server.url())
        with engine.connect() as conn:
            assert conn.execute(text("SHOW server_version_num")).scalar_one().startswith("18")
            assert conn.execute(text("SHOW listen_addresses")).scalar_one() == "127.0.0.1"
            assert conn.execute(text("SHOW unix_socket_directories")).scalar_one() == ""
        engine.dispose()
        with pytest.raises(LocalPgError, match=f"port {server.port} on 127.0.0.1 is in use"):
            LocalPostgres(pg_dir / "other", server.port).start()
    finally:
        assert server.stop()
    assert not server.running and server.pid is None
    with pytest.raises(OperationalError):
        create_engine(server.url()).connect()
    assert not server.stop()
    server.start()  # the same dir again: no initdb this time
    try:
        assert server.running and server.pid != pid
    finally:
        server.stop()


def test_port_in_use_by_another_program(pg_dir):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        with pytest.raises(LocalPgError, match="is in use"):
            LocalPostgres(pg_dir / "data", sock.getsockname()[1]).start()


def test_pgvector_and_postgres_fdw(pgvector_url):
    rng = np.random.default_rng(0)
    vectors, query = _unit(rng, 400, 16), _unit(rng, 1, 16)[0]
    engine = create_engine(pgvector_url)
    with engine.begin() as conn:
        conn.execute(text("CREATE EXTENSION vector"))
        conn.execute(text("CREATE EXTENSION postgres_fdw"))
        conn.execute(text("CREATE TABLE items (id int PRIMARY KEY, v vector(16))"))
        conn.execute(text("INSERT INTO items VALUES (:id, :v)"), [{"id": i, "v": _vec(v)} for i, v in enumerate(vectors)])
        conn.execute(text("CREATE INDEX items_hnsw ON items USING hnsw (v vector_ip_ops)"))
        conn.execute(text("SET LOCAL enable_indexscan = off"))
        exact = conn.execute(text("SELECT id FROM items ORDER BY v <#> :q LIMIT 10"), {"q": _vec(query)}).scalars().all()
    truth = list(np.argsort(-(vectors @ query))[:10])
    assert exact == truth  # <#> is the negative inner product: ascending order = most similar first
    with engine.begin() as conn:
        conn.execute(text("SET LOCAL enable_seqscan = off"))
        plan = "\n".join(conn.execute(text("EXPLAIN SELECT id FROM items ORDER BY v <#> :q LIMIT 10"),
                                      {"q": _vec(query)}).scalars())
        approx = conn.execute(text("SELECT id FROM items ORDER BY v <#> :q LIMIT 10"), {"q": _vec(query)}).scalars()
        assert "Index Scan using items_hnsw" in plan
        assert len(set(approx) & set(truth)) >= 8
    engine.dispose()


def test_replica_receives_writes_within_a_second(pg_replica):
    primary, replica = pg_replica
    writer = create_engine(primary.url("ems"), isolation_level="AUTOCOMMIT")
    reader = create_engine(replica.url("ems"), isolation_level="AUTOCOMMIT")
    with writer.connect() as w:
        assert w.execute(text("SELECT state FROM pg_stat_replication")).scalar_one() == "streaming"
        w.execute(text("CREATE TABLE ticks (id int PRIMARY KEY)"))
    delays = []
    with writer.connect() as w, reader.connect() as r:
        assert r.execute(text("SELECT pg_is_in_recovery()")).scalar_one()
        deadline = time.monotonic() + 5
        while r.execute(text("SELECT to_regclass('ticks')")).scalar_one() is None:
            assert time.monotonic() < deadline, "the table never reached the replica"
            time.sleep(0.01)
        for i in range(50):
            w.execute(text("INSERT INTO ticks VALUES (:i)"), {"i": i})
            started = time.perf_counter()
            while r.execute(text("SELECT 1 FROM ticks WHERE id = :i"), {"i": i}).first() is None:
                assert time.perf_counter() - started < 1.0, f"write {i} not on the replica within 1 s"
                time.sleep(0.001)
            delays.append(time.perf_counter() - started)
        w.execute(text("DROP TABLE ticks"))  # the pair is shared with the service's replica tests
    writer.dispose()
    reader.dispose()
    delays.sort()
    p50, p95 = statistics.median(delays) * 1000, delays[int(0.95 * len(delays)) - 1] * 1000
    print(f"\nreplica propagation over {len(delays)} writes: p50 {p50:.1f} ms, p95 {p95:.1f} ms, "
          f"max {delays[-1] * 1000:.1f} ms")


def test_replica_refuses_writes(pg_replica):
    _, replica = pg_replica
    engine = create_engine(replica.url("ems"))
    with pytest.raises(DBAPIError) as caught, engine.begin() as conn:
        conn.execute(text("CREATE TABLE nope (id int)"))
    engine.dispose()
    assert caught.value.orig.sqlstate == "25006"  # read_only_sql_transaction


_INSERT = text(
    f"INSERT INTO episodes (namespace, trajectory_hash, task, summary, embed_text, label_source, trust, "
    f"error_patterns, failure_categories, n_steps, actions, source, tags, created_at, embedding, embedding_model, "
    f"embedding_dim, trajectory, {COLUMN}) VALUES (:ns, :h, 'a task', 's', 'e', 'self_report', 0.5, '[]', '[]', 1, "
    f"'[]', 'self', '{{}}', :at, '', 'test', {DIMENSION}, '', :v) RETURNING id, tableoid::regclass::text")


def test_namespaces_sharded_over_postgres_fdw(pg_shards):
    coordinator = pg_shards.coordinator.url("ems")
    shard_urls = [s.url("ems") for s in pg_shards.shards]
    for url in [*shard_urls, coordinator]:
        upgrade(url)
    shard_table(coordinator, "episodes", add_shards(coordinator, shard_urls))
    rng = np.random.default_rng(1)
    namespaces = [f"team{i}" for i in range(8)]
    vectors = {ns: _unit(rng, 12, DIMENSION) for ns in namespaces}
    engine = create_engine(coordinator)
    placed: dict[str, set[str]] = {}
    ids = []
    with engine.begin() as conn:
        for ns in namespaces:
            for i, v in enumerate(vectors[ns]):
                row_id, partition = conn.execute(_INSERT, {"ns": ns, "h": f"{ns}-{i}", "at": datetime.now(UTC),
                                                           "v": _vec(v)}).one()
                placed.setdefault(ns, set()).add(partition)
                ids.append(row_id)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)  # one sequence, on the coordinator
    assert all(len(parts) == 1 for parts in placed.values())  # a namespace lives on one shard
    assert {p for parts in placed.values() for p in parts} == {"episodes_shard0", "episodes_shard1"}
    for i, url in enumerate(shard_urls):  # the rows really are on the shard their partition names
        shard = create_engine(url)
        with shard.connect() as conn:
            stored = dict(conn.execute(text("SELECT namespace, count(*) FROM episodes GROUP BY 1")).all())
            conn.execute(text("ANALYZE episodes"))  # the shard plans with real statistics (HNSW for the cursor)
        shard.dispose()
        assert stored == {ns: 12 for ns, parts in placed.items() if parts == {f"episodes_shard{i}"}}

    ns, query = "team3", vectors["team3"][5]
    with engine.connect() as conn:
        plan = conn.execute(text(f"EXPLAIN (VERBOSE, FORMAT JSON) SELECT id FROM episodes WHERE namespace = :ns "
                                 f"ORDER BY {COLUMN} <#> :q LIMIT 3"), {"ns": ns, "q": _vec(query)}).scalar_one()
        hits = conn.execute(text(f"SELECT trajectory_hash FROM episodes WHERE namespace = :ns "
                                 f"ORDER BY {COLUMN} <#> :q LIMIT 3"), {"ns": ns, "q": _vec(query)}).scalars().all()
        from ems_service.index.pgvector_schema import index_state

        assert index_state(conn).partitioned  # the coordinator keeps no vector index: the shards keep theirs
    scans = [node for node in _nodes(plan[0]["Plan"]) if node["Node Type"] == "Foreign Scan"]
    assert len(scans) == 1 and scans[0]["Relation Name"] == placed[ns].pop()
    remote = scans[0]["Remote SQL"]
    assert "namespace = " in remote and f"ORDER BY ({COLUMN} OPERATOR(public.<#>)" in remote
    assert hits[0] == "team3-5" and set(hits) <= {f"team3-{i}" for i in range(12)}

    with pytest.raises(IntegrityError) as caught, engine.begin() as conn:  # the shard's unique constraint holds
        conn.execute(_INSERT, {"ns": ns, "h": "team3-0", "at": datetime.now(UTC), "v": _vec(query)})
    assert caught.value.orig.sqlstate == "23505"
    engine.dispose()


def _nodes(node: dict) -> list[dict]:
    return [node] + [n for child in node.get("Plans", []) for n in _nodes(child)]
