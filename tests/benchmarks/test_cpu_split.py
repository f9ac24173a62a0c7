"""`python -m benchmarks.cpu_split`: the CPU of a coaching load, server against client, with and without embedding."""

from __future__ import annotations

import os

from benchmarks import cpu_split, scale


def test_cpu_split_reads_the_servers_cpu_and_the_query_cache_takes_the_embedding_out(embedder, tmp_path):
    scale.seed(tmp_path, embedder)
    _, coach = scale.workload(limit_runs=40)
    out = {name: cpu_split.measure(tmp_path, coach, env, clients=2, requests=80)
           for name, env in cpu_split.VARIANTS.items()}
    for row in out.values():
        assert row["errors"] == 0 and row["throughput_rps"] > 0
        assert 0 < row["event_loop_thread_ms"] <= row["server_cpu_ms_per_request"]
        assert abs(row["server_cpu_ms_per_request"] - row["server_user_ms"] - row["server_system_ms"]) <= 0.02
        assert row["client_cpu_ms_per_request"] > 0 and 0 < row["cores_busy"] <= 1.05 * (os.cpu_count() or 1)
    # every query embedded costs the server more CPU a request than the same requests answered from the cache
    assert out["query cache on"]["server_cpu_ms_per_request"] < out["every query embedded"]["server_cpu_ms_per_request"]
