"""The service at 10k / 100k / 1M stored episodes: restart, HTTP search and coach latency, concurrency, memory.

Run: `python -m benchmarks.scale [--sizes 10000,100000,1000000]` (prints JSON). A SQLite database is filled with
the dev episodes (a real ingest) and then copies of their rows with perturbed vectors (benchmarks.data). The
server is the real `webcoach serve` in its own process; restart is timed in a fresh process too, from a
snapshot and from stored vectors only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

from benchmarks.common import DATA, DEV_FILES, percentiles
from benchmarks.data import REPLICATED, fill_store
from ems_service import Embedder, Runtime, Settings
from ems_service.dataset import read_jsonl
from ems_service.db import upgrade
from ems_service.embedded import ServeProcess
from ems_service.index.faiss import snapshot_path
from ems_service.index.faiss.snapshot import files as snapshot_files
from ems_service.repositories import Database, EpisodeRepository, IndexFeed

CLIENTS = (1, 4, 16, 32)


def _env(work: Path) -> dict[str, str]:
    return {**os.environ, "EMS_DATABASE_URL": f"sqlite:///{work / 'scale.db'}", "EMS_DATA_DIR": str(work / "data"),
            "EMS_COACH__REFIT_EVERY": "0", "EMS_INDEX__CAPACITY": "5000000", "HF_HUB_OFFLINE": "1",
            "EMS_LOG_LEVEL": "WARNING", "EMS_EMBEDDER__QUERY_CACHE": "0"}  # every query embedded: cold figures


def _settings(work: Path) -> Settings:
    env = _env(work)
    settings = Settings(database_url=env["EMS_DATABASE_URL"], data_dir=Path(env["EMS_DATA_DIR"]), _env_file=None)
    settings.coach.refit_every = 0
    settings.index.capacity = 5_000_000
    return settings


def workload(limit_runs: int = 10) -> tuple[list[str], list[dict]]:
    """Search texts (tasks) and coach requests (3/5/10-step prefixes of every `limit_runs`-th dev run)."""
    texts, coach = [], []
    for name in DEV_FILES:
        lines = [ln for ln in read_jsonl(DATA / name) if ln.trajectory]
        texts += [ln.trajectory.task for ln in lines[::5]]
        for ln in lines[::limit_runs]:
            for t in (3, 5, 10):
                if len(ln.trajectory.steps) > t:
                    q = ln.trajectory.model_dump(mode="json")
                    q["steps"] = q["steps"][:t]
                    q.pop("outcome", None)
                    coach.append({"trajectory": q})
    return texts, coach


def seed(work: Path, embedder: Embedder) -> int:
    """A real ingest of the three dev files."""
    upgrade(_env(work)["EMS_DATABASE_URL"])
    rt = Runtime(_settings(work), embedder=embedder).start(background=False)
    try:
        for name in DEV_FILES:
            trajs = [ln.trajectory for ln in read_jsonl(DATA / name) if ln.trajectory]
            for i in range(0, len(trajs), 200):
                rt.ingest.ingest(namespace="default", trajectories=trajs[i : i + 200])
        return rt.episodes.count("default")
    finally:
        rt.close()


def probe_restart(work: Path) -> dict:
    """In a fresh process: load the embedder, then time the Runtime's construction and start (index open) and its
    RSS growth; then, apart, what the start spent on the snapshot's load and on the count of the table's rows."""
    from ems_service.index.faiss import NamespaceIndex
    from ems_service.runtime import build_embedder

    settings = _settings(work)
    embedder = build_embedder(settings)
    embedder.embed(["warm"])
    rss0 = _rss()
    t = time.perf_counter()
    rt = Runtime(settings, embedder=embedder)
    built = time.perf_counter() - t
    rt.start(background=False)
    ready = time.perf_counter() - t
    index = rt.vectors.namespace("default")
    how = rt.vectors.last_start["default"]
    index.wait_for_build()
    approx_ready = time.perf_counter() - t
    out = {"ready_s": round(ready, 2), "how": how, "index": index.kind, "n": len(index),
           "index_ready_s": round(approx_ready, 2), "rss_bytes_per_episode": round((_rss() - rss0) / len(index), 1),
           "index_bytes_per_episode": round(index.nbytes() / len(index), 1),
           "split_s": {"runtime_built": round(built, 3)}}
    if how.startswith("snapshot"):  # the same steps again, each alone (the files now in the page cache)
        path = snapshot_path(settings.data_dir, "default")
        t = time.perf_counter()
        NamespaceIndex.load(path, model=rt.vectors.model, dimension=rt.vectors.dimension, approx=rt.vectors.approx)
        out["split_s"]["snapshot_load"] = round(time.perf_counter() - t, 3)
        t = time.perf_counter()
        rt.episodes.count("default")
        out["split_s"]["row_count"] = round(time.perf_counter() - t, 3)
    rt.close()  # writes the snapshot the next start reads
    return out


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _probe(work: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "benchmarks.scale", "--probe-restart", str(work)],
                         capture_output=True, text=True, env=_env(work), check=True, timeout=3600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def restart(work: Path, *, warm_runs: int = 3) -> dict:
    """From stored vectors (no snapshot), then `warm_runs` times from the snapshot that start wrote: the probe with
    the median ready time is reported, with every run's in run order (one start on this VM varied from 0.5 to 1.0 s)."""
    if warm_runs < 1 or warm_runs % 2 == 0:
        raise ValueError("warm_runs must be odd: the median is one of the runs")
    for path in snapshot_files(snapshot_path(work / "data", "default")):
        path.unlink(missing_ok=True)
    cold = _probe(work)
    warm = [_probe(work) for _ in range(warm_runs)]
    median = sorted(warm, key=lambda probe: probe["ready_s"])[warm_runs // 2]
    return {"from_stored_vectors": cold,
            "from_snapshot": {**median, "ready_s_runs": [probe["ready_s"] for probe in warm]}}  # in run order


def _sequential(client: httpx.Client, path: str, bodies: list[dict], n: int) -> tuple[list[float], list]:
    for b in bodies[:10]:
        client.post(path, json=b).raise_for_status()
    times, responses = [], []
    for i in range(n):
        t = time.perf_counter()
        r = client.post(path, json=bodies[i % len(bodies)])
        times.append(time.perf_counter() - t)
        r.raise_for_status()
        responses.append(r)
    return times, responses


def _split(responses: list) -> dict:
    parts: dict[str, list[float]] = {}
    for r in responses:
        for item in r.headers.get("server-timing", "").split(", "):
            if ";dur=" in item:
                name, dur = item.split(";dur=")
                parts.setdefault(name, []).append(float(dur) / 1000)
    return {k: percentiles(v) for k, v in parts.items()}


async def _concurrent(url: str, path: str, bodies: list[dict], clients: int, total: int) -> dict:
    counter = iter(range(total))
    latencies: list[float] = []
    errors = 0

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal errors
        for i in counter:
            t = time.perf_counter()
            r = await client.post(path, json=bodies[i % len(bodies)])
            latencies.append(time.perf_counter() - t)
            errors += r.status_code >= 400

    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        started = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(clients)))
        wall = time.perf_counter() - started
    return {"clients": clients, "requests": total, "errors": errors, "throughput_rps": round(total / wall, 1),
            **percentiles(latencies)}


def http(work: Path, texts: list[str], coach: list[dict], *, with_coach: bool, concurrency: bool) -> dict:
    out: dict = {}
    search_bodies = [{"text": t, "k": 10} for t in texts]
    with ServeProcess(_env(work)) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        out["index_type"] = client.get("/v1/stats").json()["index_type"]
        times, responses = _sequential(client, "/v1/search", search_bodies, 300)
        out["search"] = {**percentiles(times), "split": _split(responses)}
        if with_coach:
            times, responses = _sequential(client, "/v1/coach", coach, 300)
            out["coach"] = {**percentiles(times), "split": _split(responses)}
        if concurrency:
            out["concurrency"] = _concurrency(server.url, search_bodies, coach)
    if concurrency:  # the same load with the embedder's micro-batching off (one text a model call, as before it)
        with ServeProcess({**_env(work), "EMS_EMBEDDER__MAX_BATCH": "1"}) as server:
            out["concurrency_unbatched"] = _concurrency(server.url, search_bodies, coach)
    return out


def _concurrency(url: str, search_bodies: list[dict], coach: list[dict]) -> dict:
    """Throughput and latency of search and coach with 1 / 4 / 16 / 32 concurrent clients."""
    return {route: [asyncio.run(_concurrent(url, path, bodies, c, 100 * max(2, c // 2))) for c in CLIENTS]
            for route, path, bodies in (("search", "/v1/search", search_bodies), ("coach", "/v1/coach", coach))}


def run(embedder: Embedder, sizes: list[int], *, coach_sizes: tuple[int, ...] = (10_000, 100_000, 1_000_000),
        restart_sizes: tuple[int, ...] = (100_000, 1_000_000), concurrency_size: int = 100_000,
        log=print) -> dict:
    work = Path(tempfile.mkdtemp(prefix="ems-bench-scale-"))
    try:
        t = time.perf_counter()
        seeded = seed(work, embedder)
        log(f"seeded {seeded} dev episodes in {time.perf_counter() - t:.0f}s")
        texts, coach = workload()
        db = Database(_env(work)["EMS_DATABASE_URL"])
        store = IndexFeed(db, EpisodeRepository(db))  # what benchmarks/data.py fills
        results = {"data": f"{seeded} ingested dev episodes, then copies of their rows: {REPLICATED}",
                   "workers": 1, "sizes": []}
        for n in sorted(sizes):
            fill_s = fill_store(store, "default", n, keep_trajectory=n <= 100_000)
            log(f"filled to {n:,} in {fill_s:.0f}s")
            row: dict = {"n": n}
            if n in restart_sizes:
                row["restart"] = restart(work)
            else:
                _probe(work)  # opens the index once and writes its snapshot
            log(f"restart probes at {n:,} done")
            row["http"] = http(work, texts, coach, with_coach=n in coach_sizes, concurrency=n == concurrency_size)
            log(f"http at {n:,} done")
            results["sizes"].append(row)
        db.close()
        return results
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--probe-restart", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe_restart is not None:
        print(json.dumps(probe_restart(args.probe_restart)))
        return
    from ems_service.runtime import build_embedder

    embedder = build_embedder(Settings(data_dir=tempfile.mkdtemp(), _env_file=None))
    result = run(embedder, [int(s) for s in args.sizes.split(",")], log=lambda m: print(m, file=sys.stderr))
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
