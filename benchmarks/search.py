"""In-process search at 10k / 100k / 1M episodes: exact flat vs IVF-SQ8, latency, recall@10 and bytes.

Run: `python -m benchmarks.search [--sizes 10000,100000,1000000]` (prints JSON). Data: see benchmarks.data.
Recall@10 is measured against the exact (flat) index on the same vectors; queries are real task texts.

`--sweep` measures the approximate index's options at each size instead (coarse quantizer flat or HNSW, lists per
sqrt(n), nprobe, OpenMP threads, and the Python around FAISS), the table behind the defaults.
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
    index.consolidate()  # as the service's maintenance does within snapshot_every_s: fewer vector blocks
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


SWEEP = {  # name -> ApproxConfig changes; nprobe is swept for each
    "flat_4": {"coarse": "flat", "lists_per_root": 4.0},
    "flat_4_subset_1000": {"coarse": "flat", "lists_per_root": 4.0, "exact_subset": 1000},
    "hnsw_4": {"coarse": "hnsw", "lists_per_root": 4.0},
    "hnsw_16": {"coarse": "hnsw", "lists_per_root": 16.0},
}


def _raw_ivf_ms(index: NamespaceIndex, queries: np.ndarray, wanted: int) -> float:
    """p50 of the FAISS call alone (what the Python around it adds is the rest of a search)."""
    from ems_service.index.faiss.approx import has_graph_coarse, search_params

    ivf = index.ivf
    params = search_params(ivf, index.approx.nprobe, None, index.approx.coarse_ef if has_graph_coarse(ivf) else None)
    samples = []
    for q in queries:
        q2 = np.ascontiguousarray(q.reshape(1, -1))
        t = time.perf_counter()
        ivf.search(q2, wanted, params=params)
        samples.append(time.perf_counter() - t)
    return percentiles(samples)["p50_ms"]


def hnsw_rows(index: NamespaceIndex, queries: np.ndarray, truth: list[list[int]], efs: list[int]) -> list[dict]:
    """An HNSW graph over 8-bit codes of every vector (faiss.IndexHNSWSQ, M=32) as the unfiltered path would use it:
    its 40 best re-ranked exactly from the float32 rows. Labels are positions (no id map)."""
    import faiss

    vectors = index._vectors.take()
    ids = index._ids[: len(vectors)]
    graph = faiss.IndexHNSWSQ(vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, 32, faiss.METRIC_INNER_PRODUCT)
    graph.hnsw.efConstruction = 40
    t = time.perf_counter()
    graph.train(vectors[:: max(1, len(vectors) // 100_000)])
    graph.add(vectors)
    build_s = round(time.perf_counter() - t, 1)
    out = []
    for ef in efs:
        params = faiss.SearchParametersHNSW()
        params.efSearch = ef
        samples, got = [], []
        for p in range(2):
            for q in queries:
                t = time.perf_counter()
                _, pos = graph.search(np.ascontiguousarray(q.reshape(1, -1)), 40, params=params)
                pos = pos[0][pos[0] >= 0]
                scores = vectors[pos] @ q
                top = pos[np.argsort(-scores)[:10]]
                samples.append(time.perf_counter() - t)
                if p == 0:
                    got.append(ids[top].tolist())
        row = {"n": len(vectors), "config": "hnsw_sq8_m32", "ef_search": ef, "build_s": build_s,
               "search": percentiles(samples), "recall10": _recall(got, truth)}
        out.append(row)
        print(json.dumps(row), file=sys.stderr)
    return out


def sweep_at(dev: DevVectors, n: int, configs: list[str], nprobes: list[int], threads: list[int],
             hnsw_efs: list[int]) -> list[dict]:
    """Every config x nprobe (x threads for the first) at n vectors: latency, recall@10, filtered too, build time."""
    vectors = replicate(dev.vectors, n, seed=n)
    rows = index_rows(dev, vectors)
    del vectors
    index = NamespaceIndex(dev.vectors.shape[1], ApproxConfig(above=0))
    for start in range(0, n, 50_000):
        index.add(rows[start : start + 50_000])
    del rows
    index.consolidate()  # as the service's maintenance does within snapshot_every_s: fewer vector blocks
    gc.collect()
    queries = dev.queries
    domain = max(set(dev.domains) - {None}, key=dev.domains.count)
    _, truth = _latency(index, queries, passes=1)
    _, truth_dom = _latency(index, queries[:100], passes=1, domain=domain)
    out = hnsw_rows(index, queries, truth, hnsw_efs) if hnsw_efs else []
    for name in configs:
        base = replace(ApproxConfig(above=0), **SWEEP[name])  # type: ignore[arg-type]
        index.approx = base
        index.ivf = None
        gc.collect()
        t = time.perf_counter()
        index.build_approx()
        build_s = round(time.perf_counter() - t, 1)
        for nprobe in nprobes:
            index.approx = replace(base, nprobe=nprobe)
            for th in threads if name == configs[0] else threads[:1]:
                set_threads(th)
                lat, got = _latency(index, queries, passes=2)
                lat_dom, got_dom = _latency(index, queries[:100], passes=2, domain=domain)
                row = {"n": n, "config": name, "nlist": index.ivf.nlist, "nprobe": nprobe, "threads": th,
                       "build_s": build_s, "search": lat, "recall10": _recall(got, truth),
                       "faiss_call_p50_ms": _raw_ivf_ms(index, queries, 10 * index.approx.rerank),
                       "search_domain_filter": lat_dom, "recall10_domain_filter": _recall(got_dom, truth_dom)}
                out.append(row)
                print(json.dumps(row), file=sys.stderr)
        set_threads(threads[0])
    return out


def main() -> None:
    import tempfile

    from ems_service import Settings
    from ems_service.runtime import build_embedder

    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--nprobe", type=int, default=ApproxConfig.nprobe)
    parser.add_argument("--sweep", action="store_true", help="measure the approximate index's options instead")
    parser.add_argument("--configs", default=",".join(SWEEP))
    parser.add_argument("--nprobes", default="8,16,32")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--hnsw-efs", default="", help="also an HNSW graph over all vectors at these efSearch")
    args = parser.parse_args()
    embedder = build_embedder(Settings(data_dir=tempfile.mkdtemp(), _env_file=None))
    dev = dev_vectors(embedder)
    if args.sweep:
        table = [row for n in (int(s) for s in args.sizes.split(","))
                 for row in sweep_at(dev, n, args.configs.split(","), [int(p) for p in args.nprobes.split(",")],
                                     [int(t) for t in args.threads.split(",")],
                                     [int(e) for e in args.hnsw_efs.split(",") if e])]
        json.dump(table, sys.stdout, indent=1)
        print()
        return
    result = run(dev, [int(s) for s in args.sizes.split(",")], ApproxConfig(nprobe=args.nprobe),
                 log=lambda m: print(m, file=sys.stderr))
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
