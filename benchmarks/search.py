"""In-process search at 10k / 100k / 1M episodes: exact flat vs IVF-SQ8, latency, recall@10 and bytes.

Run: `python -m benchmarks.search [--sizes 10000,100000,1000000]` (prints JSON). Data: see benchmarks.data.
Recall@10 is measured against the exact (flat) index on the same vectors; queries are real task texts.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from dataclasses import replace

import numpy as np

from benchmarks.common import percentiles
from benchmarks.data import REPLICATED, DevVectors, dev_vectors, index_rows, replicate
from ems_service.config import IndexSettings
from ems_service.index.faiss import ApproxConfig, NamespaceIndex, set_threads


def _latency(index: NamespaceIndex, queries: np.ndarray, *, passes: int, **flt: object) -> tuple[dict, list]:
    for q in queries[:20]:
        index.search(q, 10, **flt)
    samples, results = [], []
    for p in range(passes):
        for q in queries:
            t = time.perf_counter()
            hits = index.search(q, 10, **flt)
            samples.append(time.perf_counter() - t)
            if p == 0:
                results.append([h.id for h in hits])
    return percentiles(samples), results


def _recall(got: list[list[int]], want: list[list[int]]) -> float:
    return round(float(np.mean([len(set(g) & set(w)) / max(1, len(w)) for g, w in zip(got, want, strict=True)])), 4)


def at_size(dev: DevVectors, n: int, approx: ApproxConfig) -> dict:
    vectors = replicate(dev.vectors, n, seed=n)
    rows = index_rows(dev, vectors)
    del vectors
    index = NamespaceIndex(dev.vectors.shape[1], replace(approx, above=0))
    for start in range(0, n, 50_000):
        index.add(rows[start : start + 50_000])
    del rows
    gc.collect()
    queries = dev.queries
    domain = max(set(dev.domains) - {None}, key=dev.domains.count)
    passes = 1 if n >= 500_000 else 3
    flat_lat, truth = _latency(index, queries, passes=passes)
    flat_dom, truth_dom = _latency(index, queries[:100], passes=passes, domain=domain)
    out = {"n": n, "data": REPLICATED, "queries": len(queries),
           "flat": {"search": flat_lat, "search_domain_filter": flat_dom,
                    "bytes_per_episode": round(index.nbytes() / n, 1)}}
    index.approx = approx
    t = time.perf_counter()
    index.build_approx()
    build_s = time.perf_counter() - t
    ivf_lat, got = _latency(index, queries, passes=3)
    ivf_dom, got_dom = _latency(index, queries[:100], passes=3, domain=domain)
    out["ivf_sq8"] = {"search": ivf_lat, "search_domain_filter": ivf_dom, "recall10": _recall(got, truth),
                      "recall10_domain_filter": _recall(got_dom, truth_dom), "build_s": round(build_s, 1),
                      "nlist": index.ivf.nlist, "nprobe": approx.nprobe, "rerank": approx.rerank,
                      "bytes_per_episode": round(index.nbytes() / n, 1)}
    return out


def run(dev: DevVectors, sizes: list[int], approx: ApproxConfig | None = None, log=print) -> list[dict]:
    set_threads(IndexSettings().faiss_threads)  # as the service runs it (1 by default)
    out = []
    for n in sizes:
        t = time.perf_counter()
        out.append(at_size(dev, n, approx or ApproxConfig()))
        log(f"search at {n:,}: {time.perf_counter() - t:.0f}s")
        gc.collect()
    return out


def main() -> None:
    import tempfile

    from ems_service import Settings
    from ems_service.runtime import build_embedder

    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--nprobe", type=int, default=ApproxConfig.nprobe)
    args = parser.parse_args()
    embedder = build_embedder(Settings(data_dir=tempfile.mkdtemp(), _env_file=None))
    dev = dev_vectors(embedder)
    result = run(dev, [int(s) for s in args.sizes.split(",")], ApproxConfig(nprobe=args.nprobe),
                 log=lambda m: print(m, file=sys.stderr))
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
