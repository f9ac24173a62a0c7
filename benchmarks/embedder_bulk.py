"""A lone caller's big batches (ingest's), the embedder's micro-batches on its one-thread sessions at once against all
on its two-thread session (`OnnxEmbedder.parallel_bulk`), in turns in one process.

Run: `python -m benchmarks.embedder_bulk [--rounds 5] [--out benchmarks/results/embedder_bulk.json]`. The 396
webcanvas episode texts, embedded in chunks of 64 as one ingest call embeds them, by the served graph (selective
int8, two lanes); per round each way once, alternating which goes first. Wall and CPU seconds (the process's), their
medians, and parallel over one session.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import DATA
from condenser import condense
from ems_service import Settings
from ems_service.dataset import read_jsonl
from ems_service.runtime import build_embedder

CHUNK = 64


def run(rounds: int) -> dict:
    embedder = build_embedder(Settings(data_dir=Path(tempfile.mkdtemp(prefix="ems-bulk-")), _env_file=None))
    onnx = embedder
    while hasattr(onnx, "inner"):
        onnx = onnx.inner
    if not hasattr(onnx, "parallel_bulk"):
        raise SystemExit("the served embedder is not the ONNX one: nothing to compare")
    texts = [condense(ln.trajectory).embed_text for ln in read_jsonl(DATA / "webcanvas.jsonl") if ln.trajectory]

    def once(parallel: bool) -> tuple[float, float]:
        onnx.parallel_bulk = parallel
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(0, len(texts), CHUNK):
            embedder.embed(texts[i : i + CHUNK])
        return time.perf_counter() - wall, time.process_time() - cpu

    once(True), once(False)  # warm both ways
    samples: dict[str, list[tuple[float, float]]] = {"parallel": [], "one_session": []}
    for r in range(rounds):
        for name in ("parallel", "one_session") if r % 2 == 0 else ("one_session", "parallel"):
            samples[name].append(once(name == "parallel"))
            print(f"round {r + 1}/{rounds} {name}: {samples[name][-1]}", file=sys.stderr, flush=True)
    median = {name: {"wall_s": round(statistics.median(w for w, _ in xs), 3),
                     "cpu_s": round(statistics.median(c for _, c in xs), 3),
                     "texts_per_s": round(len(texts) / statistics.median(w for w, _ in xs), 1)}
              for name, xs in samples.items()}
    return {"texts": len(texts), "chunk": CHUNK, "backend": onnx.backend, "lanes": onnx.lanes, "rounds": rounds,
            "samples": samples, "median": median,
            "parallel_over_one_session": {k: round(median["parallel"][k] / median["one_session"][k], 3)
                                          for k in ("wall_s", "cpu_s")}}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.embedder_bulk", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/embedder_bulk.json"))
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    result = run(args.rounds)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("median", "parallel_over_one_session")}))


if __name__ == "__main__":
    main()
