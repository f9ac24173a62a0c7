"""benchmarks.pgvector's repeated runs and partial tables: what `--repeat` and `--modes` report."""

from __future__ import annotations

from benchmarks.pgvector import _median_of_runs, markdown


def _run(p99: float, recall: float, first_p99: float = 20.0) -> dict:
    measure = {"p50_ms": p99 / 3, "p95_ms": p99 / 2, "p99_ms": p99, "recall10": recall, "recall10_ids": recall,
               "queries": 300, "first_pass": {"p50_ms": 5.0, "p99_ms": first_p99}}
    return {"start_s": 1.0, "unfiltered": dict(measure), "own_site": dict(measure), "other_site": dict(measure)}


def test_repeated_runs_report_the_median_latency_and_the_lowest_recall_and_keep_every_run():
    merged = _median_of_runs([_run(30.0, 1.0, 40.0), _run(9.0, 0.96), _run(12.0, 0.99)])
    assert merged["own_site"]["p99_ms"] == 12.0
    assert merged["own_site"]["first_pass"]["p99_ms"] == 40.0  # the first run's: the only one with cold pages
    assert [r["own_site"]["first_pass"]["p99_ms"] for r in merged["runs"]] == [40.0, 20.0, 20.0]
    assert merged["own_site"]["p50_ms"] == 4.0
    assert merged["own_site"]["recall10"] == 0.96
    assert [r["own_site"]["p99_ms"] for r in merged["runs"]] == [30.0, 9.0, 12.0]
    assert "runs" not in _median_of_runs([_run(5.0, 1.0)])


def test_the_tables_of_a_partial_run_show_what_was_measured_only():
    row = {"pgvector_auto": {**_run(9.0, 1.0), "ingest_eps": 900.0}, "serve_pgvector": {"ready_s": 2.0,
                                                                                      "rss_mb": 280.0},
           "ivf_build_s": 60.0}
    table = markdown({"sizes": {"1000000": row}})
    assert "pgvector auto (IVF)" in table and "FAISS (IVF-SQ8)" not in table and "HNSW" not in table.split("\n")[0]
    assert "| 3.0 / 9.0 |" in table
    assert "| own site, first pass p50 / p99 ms | 5.0 / 20.0 |" in table
    assert "| API replica RSS after 200 searches (MB) | - | 280.0 |" in table
