"""POST /v1/coach latency over HTTP on the dev data, split into embed / search / risk / guidance.

Run: `python -m benchmarks.coach` (prints JSON). Memory = the three dev files; queries = prefixes (3, 5 and
10 steps) of held-out webcanvas and online-mind2web runs, with their own task excluded.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import httpx
import numpy as np

from benchmarks.common import DATA, DEV_FILES, percentiles
from ems_service import EmbeddedServer, Settings
from ems_service.dataset import read_jsonl
from ems_service.db import upgrade
from ems_service.runtime import build_embedder


def main(rounds: int = 300) -> None:
    work = Path(tempfile.mkdtemp(prefix="ems-bench-coach-"))
    url = f"sqlite:///{work / 'b.db'}"
    upgrade(url)
    settings = Settings(database_url=url, data_dir=work / "data", _env_file=None)
    embedder = build_embedder(settings)  # the default backend (ONNX when it agrees with torch)
    settings.coach.refit_every = 0
    queries = []
    with EmbeddedServer(settings, embedder=embedder) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        for name in DEV_FILES:
            lines = [ln for ln in read_jsonl(DATA / name) if ln.trajectory]
            batch = [ln.trajectory.model_dump(mode="json") for i, ln in enumerate(lines)]
            for start in range(0, len(batch), 200):
                client.post("/v1/episodes:batch", json={"episodes": batch[start : start + 200]}).raise_for_status()
            for ln in lines[::10]:
                for t in (3, 5, 10):
                    if len(ln.trajectory.steps) > t:
                        q = ln.trajectory.model_dump(mode="json")
                        q["steps"] = q["steps"][:t]
                        q.pop("outcome", None)
                        queries.append(q)
        stats = client.get("/v1/stats").json()
        for q in queries[:20]:  # warm-up
            client.post("/v1/coach", json={"trajectory": q})
        total, parts = [], {"embed": [], "search": [], "risk": [], "guidance": []}
        interventions = 0
        import time

        for i in range(rounds):
            q = queries[i % len(queries)]
            t = time.perf_counter()
            r = client.post("/v1/coach", json={"trajectory": q})
            total.append(time.perf_counter() - t)
            r.raise_for_status()
            interventions += r.json()["intervene"]
            for item in r.headers["server-timing"].split(", "):
                name, dur = item.split(";dur=")
                parts[name].append(float(dur) / 1000)
    out = {
        "episodes": stats["episodes"],
        "requests": rounds,
        "http_total": percentiles(total),
        "split": {k: percentiles(v) for k, v in parts.items()},
        "server_side_share": round(float(np.median([sum(x) for x in zip(*parts.values(), strict=True)]) /
                                         np.median(total)), 3),
        "intervention_rate": round(interventions / rounds, 3),
        "embedder": getattr(embedder, "backend", "torch"),
    }
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
