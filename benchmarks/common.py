"""Helpers shared by the benchmarks: timing, percentiles, a throw-away embedded service."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ems_service import Embedder, Runtime, Settings
from ems_service.dataset import DEV_FILES as DEV_FILES  # the file names, for the modules importing them from here
from ems_service.dataset import dev_data_dir
from ems_service.db import upgrade

ROOT = Path(__file__).resolve().parents[1]
DATA = dev_data_dir()  # datasets/trajectories, or $EMS_DEV_DATA


def percentiles(samples_s: list[float]) -> dict[str, float]:
    """p50/p95/p99 in milliseconds."""
    arr = np.array(samples_s) * 1000
    return {"p50_ms": round(float(np.percentile(arr, 50)), 3), "p95_ms": round(float(np.percentile(arr, 95)), 3),
            "p99_ms": round(float(np.percentile(arr, 99)), 3), "n": len(samples_s)}


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def median_of(runs: list[float]) -> float:
    return float(statistics.median(runs))


def fresh_runtime(embedder: Embedder, *, workdir: Path | None = None, **overrides: object) -> Runtime:
    """An embedded runtime on a new SQLite file built by the migrations."""
    workdir = workdir or Path(tempfile.mkdtemp(prefix="ems-bench-"))
    url = f"sqlite:///{workdir / 'bench.db'}"
    upgrade(url)
    settings = Settings(database_url=url, data_dir=workdir / "data", _env_file=None, **overrides)
    settings.coach.refit_every = 0  # no background refit competing for the CPU while we measure
    settings.embedder.query_cache = 0  # every query embedded: repeated benchmark queries must not hit a cache
    return Runtime(settings, embedder=embedder).start(background=False)
