"""Where a coach call's time goes, in process (issue 20's profile): the embedder's cost by query length, and the
search stage split into the FAISS search, the (task, domain) read, the template re-rank and the rows' read.

Run: `python -m benchmarks.coach_stages [--n 100000]` (prints JSON; about 2 minutes at 100k on 2 cores). The store
is the scale benchmark's (benchmarks.scale: a real ingest of the dev runs, then copies of their rows), built in a
temporary folder; the queries are its coach workload (3/5/10-step prefixes of dev runs), embedded as the coach
embeds them. The HTTP figures are benchmarks.scale's; this says what inside them costs what.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import scale
from benchmarks.data import fill_store
from coach import PartialRun
from coach.rank import pool_size, rank
from ems_service import Runtime
from ems_service.index.base import Query
from ems_service.repositories import Database, EpisodeRepository, IndexFeed
from ems_service.runtime import build_embedder

LENGTHS = (8, 16, 32, 64, 128, 256)


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def embedder_by_length(rt: Runtime, queries: list[str]) -> dict:
    """Single-text latency of the served graph by token count, and the token counts of the coach's queries."""
    onnx = rt.embedder
    while hasattr(onnx, "inner"):
        onnx = onnx.inner
    tokenizer = getattr(onnx, "_tokenizer", None)
    if tokenizer is None:  # the torch fallback: no ONNX session to time
        return {}
    tokens = [len(tokenizer.encode(q).ids) for q in queries]
    out: dict = {"coach_query_tokens": {"p50": float(np.percentile(tokens, 50)), "p90": float(np.percentile(tokens, 90)),
                                        "max": max(tokens)}, "single_text_p50_ms": {}}
    for n in LENGTHS:
        ids = np.full((1, n), 1000, dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        times = []
        for i in range(60):
            t = time.perf_counter()
            onnx._session.run(None, feed)
            if i >= 10:
                times.append(time.perf_counter() - t)
        out["single_text_p50_ms"][str(n)] = _median_ms(times)
    return out


def search_stage(rt: Runtime, runs: list[PartialRun], vectors: list[np.ndarray], rounds: int = 3) -> dict:
    """The coach's search stage (RetrievalService.search_vector with the coach's preferences), step by step."""
    k = rt.coaching.settings.k
    boost = rt.settings.coach.domain_boost
    parts: dict[str, list[float]] = {"faiss": [], "tasks": [], "rank": [], "rows": [], "total": []}
    for r in range(rounds):
        for run, vector in zip(runs, vectors, strict=True):
            t0 = time.perf_counter()
            hits = rt.vectors.search("default", Query(vector, pool_size(k), prefer_domain=run.domain, boost=boost))
            t1 = time.perf_counter()
            light = rt.episodes.tasks("default", [h.id for h in hits])
            t2 = time.perf_counter()
            top = rank(run.task, run.domain, [h for h in hits if h.id in light],
                       key=lambda h: (h.score, *light[h.id]), domain_boost=boost)[:k]
            t3 = time.perf_counter()
            rt.episodes.summaries("default", [h.id for h in top])
            t4 = time.perf_counter()
            if r:  # the first round warms the page cache and the (task, domain) memo
                for name, a, b in (("faiss", t0, t1), ("tasks", t1, t2), ("rank", t2, t3), ("rows", t3, t4),
                                   ("total", t0, t4)):
                    parts[name].append(b - a)
    return {f"{name}_p50_ms": _median_ms(v) for name, v in parts.items()} | {"k": k, "pool": pool_size(k)}


def run(n: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="ems-bench-stages-"))
    try:
        settings = scale._settings(work)
        embedder = build_embedder(settings)
        scale.seed(work, embedder)
        db = Database(scale._env(work)["EMS_DATABASE_URL"])
        fill_store(IndexFeed(db, EpisodeRepository(db)), "default", n, keep_trajectory=n <= 100_000)
        rt = Runtime(settings, embedder=embedder).start(background=False)
        try:
            rt.vectors.namespace("default").wait_for_build()
            _, coach = scale.workload()
            runs = [PartialRun.model_validate(c["trajectory"]) for c in coach]
            queries = [rt.retrieval.query_text(trajectory=r) for r in runs]
            vectors = [rt.retrieval.embed_query("default", q) for q in queries]
            return {"n": n, "queries": len(runs), "embedder": embedder_by_length(rt, queries),
                    "search_stage": search_stage(rt, runs, vectors)}
        finally:
            rt.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.coach_stages")
    parser.add_argument("--n", type=int, default=100_000, help="stored episodes")
    args = parser.parse_args()
    json.dump(run(args.n), sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
