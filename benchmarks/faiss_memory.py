"""The FAISS backend's memory: bytes held per episode in exact mode, and the first write after a restart from a
snapshot (how long it holds the namespace lock); beside it the snapshot's load time and the speed of the checksums a
load reads every byte for (XXH3-128, what snapshots carry; CRC-32, what formats 3-4 carried; SHA-256).

Run: `python -m benchmarks.faiss_memory [--sizes 100000,1000000] [--exact-sizes 100000]` (prints JSON). Vectors are
random unit vectors (384-d): neither figure depends on what they are. The snapshot is of an exact index (the copy of
the vectors the first write used to make does not depend on the index kind; an IVF's own add of one row is a
quantizer search). The snapshot files are read from the page cache (written just before): a cold disk adds the
reads of the pages a search touches, not a copy.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import timed
from ems_service.index.base import IndexRow
from ems_service.index.faiss import ApproxConfig, NamespaceIndex, set_threads
from ems_service.index.faiss.snapshot import digest_of, files

DIM = 384
DOMAINS = ["shop.example", "news.example", "air.example", "bank.example", None]
CHUNK = 50_000


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _unit(n: int, rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal((n, DIM), dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _rows(vectors: np.ndarray, first_id: int) -> list[IndexRow]:
    return [IndexRow(first_id + i, vectors[i], DOMAINS[i % len(DOMAINS)], bool(i % 2), f"t{i % 5000}")
            for i in range(len(vectors))]


def _fill(n: int, seed: int) -> NamespaceIndex:
    rng = np.random.default_rng(seed)
    index = NamespaceIndex(DIM, ApproxConfig(above=0))
    for start in range(0, n, CHUNK):
        index.add(_rows(_unit(min(CHUNK, n - start), rng), first_id=1 + start))
    return index


def exact_bytes(n: int) -> dict:
    """Bytes per episode of an exact index of n vectors: as counted by nbytes(), and the process's RSS growth (which
    also sees FAISS's allocations and the id -> position map)."""
    gc.collect()
    before = _rss()
    index = _fill(n, seed=n)
    gc.collect()
    grown = _rss() - before
    out = {"n": n, "nbytes_per_episode": round(index.nbytes() / n, 1), "rss_per_episode": round(grown / n, 1),
           "float32_vector_bytes": DIM * 4}
    del index
    gc.collect()
    return out


def first_write(n: int, directory: Path) -> dict:
    """Restart from an n-vector snapshot, then time the first writes (each holds the namespace lock throughout)."""
    index = _fill(n, seed=n + 1)
    path = directory / "bench.faiss"
    index.save(path, model="bench")
    del index
    gc.collect()
    checksums = checksum_speed(files(path)[1])
    started = time.perf_counter()
    loaded = NamespaceIndex.load(path, model="bench", dimension=DIM, approx=ApproxConfig(above=0))
    load_s = time.perf_counter() - started
    rng = np.random.default_rng(1)
    new = _rows(_unit(1_000, rng), first_id=10 * n)
    rss = _rss()
    writes = []
    for row in new[:5]:
        t = time.perf_counter()
        loaded.add([row])
        writes.append(round((time.perf_counter() - t) * 1e3, 3))
    rss_after = _rss()
    t = time.perf_counter()
    loaded.add(new[5:])
    batch_ms = (time.perf_counter() - t) * 1e3
    assert loaded.search(new[3].vector, 1)[0].id == new[3].id
    out = {"n": n, "load_s": round(load_s, 3), "checksum_gb_per_s": checksums, "first_writes_ms": writes, "then_995_rows_ms": round(batch_ms, 2),
           "rss_grown_by_first_writes_mb": round((rss_after - rss) / 2**20, 1)}
    del loaded
    gc.collect()
    for p in directory.iterdir():
        p.unlink()
    return out


def checksum_speed(path: Path) -> dict[str, float]:
    """GB/s of each checksum over one file read from the page cache (best of 3)."""
    def sha256(p: Path) -> str:
        h = hashlib.sha256()
        with open(p, "rb") as f:
            while chunk := f.read(1 << 24):
                h.update(chunk)
        return h.hexdigest()

    size = path.stat().st_size
    out = {}
    for name, digest in (("xxh3_128", lambda p: digest_of(p, "xxh3_128")), ("crc32", lambda p: digest_of(p, "crc32")),
                         ("sha256", sha256)):
        best = min(timed(lambda digest=digest: digest(path), 3))
        out[name] = round(size / best / 1e9, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100000,1000000", help="snapshot sizes for the first write")
    parser.add_argument("--exact-sizes", default="100000", help="exact-index sizes for bytes per episode")
    args = parser.parse_args()
    set_threads(1)
    out: dict = {"data": f"random unit vectors, {DIM}-d", "exact_bytes": [], "first_write_after_restart": []}
    for n in (int(s) for s in args.exact_sizes.split(",") if s):
        out["exact_bytes"].append(exact_bytes(n))
        print(f"exact bytes at {n:,} done", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",") if s):
            out["first_write_after_restart"].append(first_write(n, Path(tmp)))
            print(f"first write at {n:,} done", file=sys.stderr)
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
