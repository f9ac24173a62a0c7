"""Helpers shared by the benchmarks: timing, percentiles, a throw-away embedded service."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ems_service import Embedder, Runtime, Settings
from ems_service.db import upgrade

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "trajectories"
DEV_FILES = ["webcanvas.jsonl", "online_mind2web_abp.jsonl", "mind2web_demos.jsonl"]


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
    return Runtime(settings, embedder=embedder).start(background=False)


class LiveServer:
    """The real app under uvicorn on a free loopback port, in a background thread."""

    def __init__(self, settings: Settings, embedder: Embedder) -> None:
        import socket
        import threading

        import uvicorn

        from ems_service import create_app

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        config = uvicorn.Config(create_app(settings, embedder=embedder), host="127.0.0.1", port=self.port,
                                log_level="warning", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LiveServer:
        import httpx

        self.thread.start()
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if httpx.get(self.url + "/readyz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("server did not become ready")

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
