"""The embedder under concurrent callers, as the service runs it: the micro-batcher (ems_service.batcher) over the
ONNX session, with one model call at a time (lanes 1, before #20) or two (lanes 2, the default on two cores), and
the session's intra-op threads at 2 or 1.

Run: `python -m benchmarks.embedder_concurrency [--out benchmarks/results/embedder_concurrency.json]`. Texts/s
while 1 / 4 / 16 / 32 threads each embed one dev text at a time (320 webcanvas episode texts), with the p50 / p99
a request waits, and the p50 of a text embedded alone afterwards.
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from benchmarks.common import DATA, percentiles
from condenser import condense
from ems_service.batcher import BatchingEmbedder
from ems_service.dataset import read_jsonl
from ems_service.onnx_embedder import SEL8, OnnxEmbedder, default_path, sibling

CLIENTS = (1, 4, 16, 32)
VARIANTS = {"lanes1_threads2": (1, 2), "lanes2_threads2": (2, 2), "lanes2_threads1": (2, 1)}


def _measure(embedder: BatchingEmbedder, texts: list[str], clients: int) -> dict:
    for t in texts[:20]:
        embedder.embed([t])
    waits: list[float] = []

    def one(t: str) -> None:
        s = time.perf_counter()
        embedder.embed([t])
        waits.append(time.perf_counter() - s)

    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, texts))
    rate = len(texts) / (time.perf_counter() - started)
    alone = []
    for t in texts[:60]:
        s = time.perf_counter()
        embedder.embed([t])
        alone.append(time.perf_counter() - s)
    lat = percentiles(waits)
    return {"clients": clients, "texts_per_s": round(rate, 1), "p50_ms": lat["p50_ms"], "p99_ms": lat["p99_ms"],
            "alone_p50_ms": round(float(np.median(alone)) * 1000, 2)}


def run() -> dict:
    texts = [condense(ln.trajectory).embed_text for ln in read_jsonl(DATA / "webcanvas.jsonl") if ln.trajectory][:320]
    graph = sibling(default_path(), SEL8)
    out: dict = {"graph": graph.name, "texts": len(texts), "batch_wait_ms": 1.0}
    for name, (lanes, threads) in VARIANTS.items():
        batcher = BatchingEmbedder(OnnxEmbedder(graph, threads=threads, lanes=lanes), max_wait_s=0.001, lanes=lanes)
        out[name] = [_measure(batcher, texts, c) for c in CLIENTS]
        print(name, json.dumps(out[name]), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/embedder_concurrency.json"))
    args = parser.parse_args()
    result = run()
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
