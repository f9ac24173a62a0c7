"""Core loop figures: ingest rate (service path vs raw embedder) and search latency at the dev-set size.

Run: `python -m benchmarks.core` (prints JSON; medians over 3 runs for ingest). `--profile-ingest`: where the
service's ingest of the same file spends its time (cProfile, cumulative seconds of each stage, one run).
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


STAGES = {  # (file suffix, function) -> stage: cumulative seconds under cProfile
    ("ems_service/onnx_embedder/runtime.py", "embed"): "embed",
    ("ems_service/embeddings.py", "embed"): "embed",  # the torch backend
    ("condenser/condense.py", "condense"): "condense",
    ("condenser/redact.py", "redact_trajectory"): "condense: redaction",
    ("ems_service/lessons.py", "learn_many"): "lessons learned",
    ("ems_service/repositories/episodes.py", "insert_each"): "rows inserted",
    ("ems_service/repositories/episodes.py", "find_by_hashes"): "duplicates looked up",
    ("ems_service/index/faiss/backend.py", "add"): "index add",
}


def ingest_profile(embedder: Embedder, file: str, *, batch: int = 64) -> dict:
    """One service ingest of `file` under cProfile: the wall time, the raw embedder's on the same texts, and the
    cumulative seconds of each stage (cProfile's overhead inflates the Python stages somewhat)."""
    import cProfile
    import pstats

    trajs = [ln.trajectory for ln in read_jsonl(DATA / file) if ln.trajectory]
    texts = [condense(t).embed_text for t in trajs]
    t = time.perf_counter()
    for i in range(0, len(texts), batch):
        embedder.embed(texts[i : i + batch])
    raw = time.perf_counter() - t
    rt = fresh_runtime(embedder)
    profile = cProfile.Profile()
    t = time.perf_counter()
    profile.enable()
    for i in range(0, len(trajs), batch):
        rt.ingest.ingest(namespace="default", trajectories=trajs[i : i + batch])
    profile.disable()
    wall = time.perf_counter() - t
    rt.close()
    stages: dict[str, float] = {}
    for (path, _, name), row in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]  # pstats' table
        for (suffix, function), stage in STAGES.items():
            if name == function and path.endswith(suffix):
                stages[stage] = round(stages.get(stage, 0.0) + row[3], 3)
    return {"file": file, "episodes": len(trajs), "batch": batch, "raw_embedder_s": round(raw, 3),
            "service_s_profiled": round(wall, 3), "stages_s": stages}


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
    if "--profile-ingest" in sys.argv[1:]:
        json.dump(ingest_profile(embedder, "webcanvas.jsonl"), sys.stdout, indent=2)
        print()
        return
    out = {"ingest": ingest_rate(embedder, "webcanvas.jsonl"), "search": search_latency(embedder)}
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
