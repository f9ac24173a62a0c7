"""Python's garbage collector under coach and search requests: how often each generation is collected and how long
the collections take, in one process at the dev-set size (a candidate cause of the mixed load's tail).

Run: `python -m benchmarks.gc_pauses` (prints JSON, `benchmarks/results/gc_pauses.json` with `--out`). The dev set
is ingested (SQLite, FAISS), 100 coach requests warm the app, then `gc.callbacks` times every collection over three
passes of the coach workload and 300 searches each, through FastAPI's TestClient in this process.
"""

from __future__ import annotations

import argparse
import gc
import json
import tempfile
import time
from pathlib import Path

from benchmarks import scale
from ems_service import Settings, create_app
from ems_service.runtime import build_embedder


def main(passes: int = 3) -> dict:
    from fastapi.testclient import TestClient

    work = Path(tempfile.mkdtemp(prefix="ems-gc-"))
    embedder = build_embedder(Settings(data_dir=work / "embedder", _env_file=None))
    scale.seed(work, embedder)
    texts, coach = scale.workload()
    pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
    started = [0.0]

    def timed(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses[info["generation"]].append(time.perf_counter() - started[0])

    with TestClient(create_app(scale._settings(work), embedder=embedder)) as client:
        for body in coach[:100]:
            client.post("/v1/coach", json=body)
        tracked = len(gc.get_objects())
        gc.callbacks.append(timed)
        t = time.perf_counter()
        requests = 0
        try:
            for _ in range(passes):
                for body in coach:
                    client.post("/v1/coach", json=body)
                for text in texts[:300]:
                    client.post("/v1/search", json={"text": text, "k": 5})
                requests += len(coach) + len(texts[:300])
        finally:
            gc.callbacks.remove(timed)
        wall = time.perf_counter() - t
    collections = {f"gen{g}": {"count": len(v), "total_ms": round(sum(v) * 1000, 1),
                               "max_ms": round(max(v, default=0.0) * 1000, 2)} for g, v in pauses.items()}
    spent = sum(sum(v) for v in pauses.values())
    return {"requests": requests, "wall_s": round(wall, 2), "tracked_objects": tracked,
            "thresholds": list(gc.get_threshold()), "collections": collections,
            "share_of_wall": round(spent / wall, 4)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    result = main()
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
