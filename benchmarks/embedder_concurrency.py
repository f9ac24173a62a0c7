"""The ONNX embedder under concurrent callers: one 2-thread session whose runs are serialized (what the service
does) against one 1-thread session running two texts at once, one core each.

Run: `python -m benchmarks.embedder_concurrency [--out benchmarks/results/embedder_concurrency.json]`. Texts/s
while 1 / 4 / 16 threads each embed one dev text at a time (320 webcanvas episode texts), and the p50 of a text
embedded alone. Measures what #20's coaching throughput is bound by; the service is not changed by it.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from benchmarks.common import DATA
from condenser import condense
from ems_service.dataset import read_jsonl
from ems_service.onnx_embedder import SEL8, OnnxEmbedder, default_path, sibling


def _measure(embedder: OnnxEmbedder, texts: list[str], clients: int) -> dict:
    for t in texts[:20]:
        embedder.embed([t])
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(lambda t: embedder.embed([t]), texts))
    rate = len(texts) / (time.perf_counter() - started)
    alone = []
    for t in texts[:60]:
        s = time.perf_counter()
        embedder.embed([t])
        alone.append(time.perf_counter() - s)
    return {"clients": clients, "texts_per_s": round(rate, 1), "alone_p50_ms": round(float(np.median(alone)) * 1000, 2)}


def run() -> dict:
    texts = [condense(ln.trajectory).embed_text for ln in read_jsonl(DATA / "webcanvas.jsonl") if ln.trajectory][:320]
    graph = sibling(default_path(), SEL8)
    serialized = OnnxEmbedder(graph, threads=2)
    parallel = OnnxEmbedder(graph, threads=1)
    parallel._lock = threading.Semaphore(2)  # type: ignore[assignment]  # two runs at once, one core each
    return {"graph": graph.name, "texts": len(texts),
            "one_session_2_threads_serialized": [_measure(serialized, texts, c) for c in (1, 4, 16)],
            "one_session_1_thread_2_runs_at_once": [_measure(parallel, texts, c) for c in (1, 4, 16)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/embedder_concurrency.json"))
    args = parser.parse_args()
    result = run()
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
