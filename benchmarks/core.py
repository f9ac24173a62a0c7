"""Core loop figures: ingest rate (service path vs raw embedder) and search latency at the dev-set size.

Run: `python -m benchmarks.core` (prints JSON; medians over 3 runs for ingest).
"""

from __future__ import annotations

import json
import sys
import time

from benchmarks.common import DATA, DEV_FILES, fresh_runtime, median_of, percentiles, timed
from condenser import condense
from ems_service import Embedder
from ems_service.dataset import read_jsonl


def ingest_rate(embedder: Embedder, file: str, *, batch: int = 64, runs: int = 3) -> dict:
    trajs = [ln.trajectory for ln in read_jsonl(DATA / file) if ln.trajectory]
    texts = [condense(t).embed_text for t in trajs]
    raw, service = [], []
    for _ in range(runs):
        t = time.perf_counter()
        for i in range(0, len(texts), batch):
            embedder.embed(texts[i : i + batch])
        raw.append(len(texts) / (time.perf_counter() - t))
        rt = fresh_runtime(embedder)
        t = time.perf_counter()
        for i in range(0, len(trajs), batch):
            rt.ingest.ingest(namespace="default", trajectories=trajs[i : i + batch])
        service.append(len(trajs) / (time.perf_counter() - t))
        rt.close()
    return {"file": file, "episodes": len(trajs), "batch": batch, "raw_embedder_eps": round(median_of(raw), 1),
            "service_eps": round(median_of(service), 1), "ratio": round(median_of(service) / median_of(raw), 3)}


def search_latency(embedder: Embedder) -> dict:
    rt = fresh_runtime(embedder)
    n = 0
    for f in DEV_FILES:
        trajs = [ln.trajectory for ln in read_jsonl(DATA / f) if ln.trajectory]
        n += len(rt.ingest.ingest(namespace="default", trajectories=trajs))
    queries = [t.task for f in DEV_FILES for t in [ln.trajectory for ln in read_jsonl(DATA / f)][:100:5] if t]
    vectors = embedder.embed(queries)
    it = iter(list(vectors) * 20)
    search_only = timed(lambda: rt.retrieval.search_vector(namespace="default", vector=next(it), k=5), 400)
    qi = iter(queries * 20)
    with_embed = timed(lambda: rt.retrieval.search(namespace="default", text=next(qi), k=5), 200)
    from fastapi.testclient import TestClient

    from ems_service import create_app

    with TestClient(create_app(rt.settings, embedder=embedder)) as client:
        qi = iter(queries * 20)
        http = timed(lambda: client.post("/v1/search", json={"text": next(qi), "k": 5}), 200)
    rt.close()
    return {"episodes": len(rt.vectors.sizes()) and n, "index_search": percentiles(search_only),
            "embed_and_search": percentiles(with_embed), "http_search": percentiles(http)}


def main() -> None:
    import tempfile

    from ems_service import Settings
    from ems_service.runtime import build_embedder

    embedder = build_embedder(Settings(data_dir=tempfile.mkdtemp(), _env_file=None))
    print(f"embedder backend: {embedder.backend}", file=sys.stderr)
    out = {"ingest": ingest_rate(embedder, "webcanvas.jsonl"), "search": search_latency(embedder)}
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
