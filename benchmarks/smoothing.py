"""Which feed-forward down-projections the selective int8 graph smooths and quantizes, and how strongly: trial graphs
side by side.

Run: `python -m benchmarks.smoothing [--trials "0.75:1,3,5;0.75:0"]` (`benchmarks/results/smoothing.json`). Each
trial `strength:layers` exports, from the installed fp32 graph, the selective graph with the down-projections of
those layers smoothed at that strength and in int8 (`onnx_embedder.export._quantize`), then measures its minimum and mean
cosine with the torch model over the agreement texts (what export calibrates on and records) and over the dev texts
(not calibrated on), and its single-text p50 over 200 dev texts (one text a call, after a warm-up pass). The
default trials: none smoothed (the graph before), each layer alone, all six, and layers 1, 3, 5 at three strengths.
Timings are of one process on a shared VM: compare within one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

from benchmarks.embedder import _sample, texts
from ems_service.embeddings import default_model_path
from ems_service.onnx_embedder import OnnxEmbedder, agreement_texts, default_path
from ems_service.onnx_embedder.export import _quantize, _reference

DEFAULT_TRIALS = ("0.75:", *(f"0.75:{layer}" for layer in range(6)), "0.75:0,1,2,3,4,5", "0.6:1,3,5", "0.75:1,3,5",
                  "0.85:1,3,5")


def _layers(spec: str) -> tuple[float, tuple[str, ...]]:
    """(strength, the MatMul name patterns) of a trial `strength:layers`; ValueError saying what is wrong."""
    strength, colon, layers = spec.partition(":")
    if not colon:
        raise ValueError(f"{spec!r}: a trial is strength:layers, e.g. 0.75:1,3,5 (0.75: for none)")
    try:
        value, numbers = float(strength), [int(n) for n in layers.split(",") if n.strip()]
    except ValueError:
        raise ValueError(f"{spec!r}: the strength is a number and the layers whole numbers") from None
    if not 0 <= value <= 1 or any(not 0 <= n <= 5 for n in numbers):
        raise ValueError(f"{spec!r}: the strength lies in [0, 1] and MiniLM's layers are 0-5")
    return value, tuple(f"layer.{n}/output/dense/" for n in numbers)


def trial(spec: str, folder: Path, reference: np.ndarray, sample: list[str], all_texts: list[str], split: int) -> dict:
    strength, layers = _layers(spec)
    graph = folder / f"trial-{len(list(folder.iterdir()))}.onnx"
    _quantize(default_path(), graph, selective=True, smoothed_layers=layers, strength=strength)
    smoothed = sum(n.op_type == "Mul" and n.name.endswith("/smooth") for n in onnx.load(str(graph)).graph.node)
    embedder = OnnxEmbedder(graph, batch_size=32, check=False)
    cos = (reference * embedder.embed(all_texts)).sum(axis=1)
    for text in sample:
        embedder.embed([text])
    times = []
    for text in sample:
        started = time.perf_counter()
        embedder.embed([text])
        times.append(time.perf_counter() - started)
    graph.unlink()
    return {"trial": spec, "strength": strength, "layers": [p.split("/")[0] for p in layers], "smoothing_muls": smoothed,
            "agreement_min": round(float(cos[:split].min()), 4), "agreement_mean": round(float(cos[:split].mean()), 5),
            "dev_min": round(float(cos[split:].min()), 4), "dev_mean": round(float(cos[split:].mean()), 5),
            "single_p50_ms": round(statistics.median(times) * 1000, 3)}


def run(trials: list[str], log=print) -> dict:
    agreement, dev = agreement_texts(), texts()
    all_texts = agreement + dev
    reference = _reference(default_model_path(), all_texts)
    sample = _sample(dev)[:200]
    rows = []
    with tempfile.TemporaryDirectory(prefix="ems-smoothing-") as folder:
        for spec in trials:
            rows.append(trial(spec, Path(folder), reference, sample, all_texts, len(agreement)))
            log(json.dumps(rows[-1]))
    return {"agreement_texts": len(agreement), "dev_texts": len(dev), "timed_texts": len(sample), "trials": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", default=";".join(DEFAULT_TRIALS),
                        help="strength:layers entries separated by ';' (layers by number, e.g. 0.75:1,3,5)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/smoothing.json"))
    args = parser.parse_args()
    trials = [t.strip() for t in args.trials.split(";") if t.strip()]
    for spec in trials:
        try:
            _layers(spec)
        except ValueError as e:
            parser.error(str(e))
    result = run(trials, log=lambda m: print(m, file=sys.stderr))
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
