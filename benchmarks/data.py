"""Benchmark data: real MiniLM vectors of the dev episodes, replicated to large N, and databases filled with them.

Uniform random vectors in 384-d make approximate indexes look far worse than they are on text, so large N is
reached by replicating the real dev vectors with small Gaussian perturbations (renormalized). Every figure
built on this says so in its `data` field.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from sqlalchemy import insert, select

from benchmarks.common import DATA, DEV_FILES
from condenser import condense
from ems_service.dataset import read_jsonl
from ems_service.embeddings import Embedder
from ems_service.index.base import IndexRow
from ems_service.repositories import IndexFeed
from ems_service.tables import EpisodeRecord

SIGMA = 0.01  # per dimension: a copy keeps cosine ~0.98 with its original
REPLICATED = f"dev-set MiniLM vectors replicated with N(0, {SIGMA}^2) noise per dimension, renormalized"


@dataclass
class DevVectors:
    vectors: np.ndarray  # (n, d) float32, one per dev episode
    domains: list[str | None]
    success: list[bool | None]
    queries: np.ndarray  # task texts of the dev runs, embedded (real queries)
    query_domains: list[str | None]  # the site of each query's run (an agent's own-site filter)


def dev_vectors(embedder: Embedder, *, max_queries: int = 300) -> DevVectors:
    episodes = [condense(ln.trajectory) for name in DEV_FILES for ln in read_jsonl(DATA / name) if ln.trajectory]
    vectors = embedder.embed([ep.embed_text for ep in episodes])
    rng = np.random.default_rng(7)
    picked = rng.permutation(len(episodes))[:max_queries]
    return DevVectors(vectors.astype(np.float32), [ep.domain for ep in episodes], [ep.success for ep in episodes],
                      embedder.embed([episodes[i].task for i in picked]).astype(np.float32),
                      [episodes[i].domain for i in picked])


def replicate(base: np.ndarray, n: int, *, seed: int = 0, chunk: int = 100_000) -> np.ndarray:
    """n vectors: base rows cycled, each with fresh Gaussian noise, renormalized (float32)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, base.shape[1]), dtype=np.float32)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        block = base[np.arange(start, stop) % len(base)] + rng.normal(scale=SIGMA, size=(stop - start, base.shape[1]))
        out[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def index_rows(dev: DevVectors, vectors: np.ndarray, *, first_id: int = 1) -> list[IndexRow]:
    m = len(dev.domains)
    return [IndexRow(first_id + i, vectors[i], dev.domains[i % m], dev.success[i % m], f"t{i % 5000}")
            for i in range(len(vectors))]


def fill_store(store: IndexFeed, namespace: str, n: int, *, seed: int = 0, keep_trajectory: bool = True,
               chunk: int = 5_000, progress: bool = True) -> float:
    """Grow `namespace` to n rows by copying its real rows (new hash, perturbed vector); returns seconds.

    The rows already there come from a real ingest; copies keep every column the coach reads. With
    keep_trajectory=False the raw trajectory blob is left empty (the hot path never reads it), which keeps a
    1M-row SQLite file to a few GB.
    """
    started = time.perf_counter()
    table = EpisodeRecord.__table__
    with store.session() as s:
        originals = [dict(r._mapping) for r in s.execute(select(table).where(table.c.namespace == namespace))]
    have = len(originals)
    if have == 0 or n <= have:
        return 0.0
    base = np.stack([np.frombuffer(r["embedding"], dtype=np.float32) for r in originals])
    rng = np.random.default_rng(seed)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n - have, desc=f"fill {namespace} to {n:,}", unit="row", leave=False)
    for start in range(have, n, chunk):
        stop = min(n, start + chunk)
        src = np.arange(start, stop) % have
        noisy = base[src] + rng.normal(scale=SIGMA, size=(stop - start, base.shape[1]))
        noisy = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)
        rows = []
        for j, i in enumerate(src):
            row = dict(originals[i])
            row.pop("id")
            row["trajectory_hash"] = f"{row['trajectory_hash'][:40]}-{start + j}"
            row["embedding"] = noisy[j].tobytes()
            if not keep_trajectory:
                row["trajectory"] = b""
            rows.append(row)
        with store.session() as s:
            s.execute(insert(table), rows)
        if bar is not None:
            bar.update(stop - start)
    if bar is not None:
        bar.close()
    return time.perf_counter() - started


def spread(embedder: Embedder) -> dict:
    """How close the replicated copies are, beside how close real repeated runs are: the cosine between two dev
    runs of the same task (WebCanvas ran its tasks with several agents) and between two copies of one vector."""
    from collections import defaultdict

    episodes = [condense(ln.trajectory) for name in DEV_FILES for ln in read_jsonl(DATA / name) if ln.trajectory]
    vectors = embedder.embed([ep.embed_text for ep in episodes])
    by_task: dict[str, list[int]] = defaultdict(list)
    for i, ep in enumerate(episodes):
        by_task[ep.task.strip().lower()].append(i)
    same = np.array([float(vectors[a] @ vectors[b]) for ix in by_task.values()
                     for n, a in enumerate(ix) for b in ix[n + 1:]])
    copies = replicate(vectors, 2 * len(vectors), seed=1)
    twins = (copies[: len(vectors)] * copies[len(vectors):]).sum(axis=1)
    pct = (5, 25, 50, 75, 95)
    return {"same_task_pairs": len(same), "tasks_run_more_than_once": sum(len(ix) > 1 for ix in by_task.values()),
            "same_task_cosine": dict(zip(map(str, pct), np.percentile(same, pct).round(3).tolist(), strict=True)),
            "copies_cosine": dict(zip(map(str, pct), np.percentile(twins, pct).round(3).tolist(), strict=True)),
            "sigma": SIGMA}


if __name__ == "__main__":
    import json

    print(json.dumps(spread(Embedder()), indent=2))
