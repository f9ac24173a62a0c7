"""Embedder backends on the dev texts: torch (sentence-transformers) vs ONNX Runtime.

Run: `python -m benchmarks.embedder` (prints JSON). `embedder_speedup` = the smaller of the single-text p50
latency ratio and the batch-32 throughput ratio; `embedder_cosine_min` = the worst agreement on the same texts.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np

from benchmarks.common import DATA, DEV_FILES
from condenser import condense
from ems_service import Embedder
from ems_service.dataset import read_jsonl
from ems_service.onnx_embedder import OnnxEmbedder, default_path, int8_path


def texts() -> list[str]:
    out = []
    for name in DEV_FILES:
        out += [condense(ln.trajectory).embed_text for ln in read_jsonl(DATA / name) if ln.trajectory]
    return out


def measure(embedder, sample: list[str], rounds: int = 3) -> dict:  # noqa: ANN001 - either backend
    embedder.embed(sample[:64])  # warm-up
    single = []
    for text in sample[:200]:
        t = time.perf_counter()
        embedder.embed([text])
        single.append(time.perf_counter() - t)
    throughput = []
    for _ in range(rounds):
        t = time.perf_counter()
        for i in range(0, 640, 32):
            embedder.embed(sample[i : i + 32])
        throughput.append(640 / (time.perf_counter() - t))
    return {"single_p50_ms": round(statistics.median(single) * 1000, 3),
            "batch32_texts_per_s": round(statistics.median(throughput), 1)}


def run() -> dict:
    all_texts = texts()
    rng = np.random.default_rng(0)
    sample = [all_texts[i] for i in rng.permutation(len(all_texts))[:640]]
    torch_e, onnx_e = Embedder(batch_size=32), OnnxEmbedder(default_path(), batch_size=32)
    result = {"texts": len(sample), "torch": measure(torch_e, sample), "onnx": measure(onnx_e, sample)}
    a, b = torch_e.embed(all_texts), onnx_e.embed(all_texts)
    cos = (a * b).sum(axis=1)
    if int8_path().exists():  # opt-in backend: reported beside, never part of embedder_speedup
        int8_e = OnnxEmbedder(int8_path(), batch_size=32, check=False)
        result["onnx_int8"] = measure(int8_e, sample)
        c8 = (a * int8_e.embed(all_texts)).sum(axis=1)
        result["onnx_int8"].update({"min_cosine": round(float(c8.min()), 6), "mean_cosine": round(float(c8.mean()), 6),
                                    "batch_speedup": round(result["onnx_int8"]["batch32_texts_per_s"]
                                                           / result["torch"]["batch32_texts_per_s"], 3)})
    single = result["torch"]["single_p50_ms"] / result["onnx"]["single_p50_ms"]
    batch = result["onnx"]["batch32_texts_per_s"] / result["torch"]["batch32_texts_per_s"]
    result.update({"single_speedup": round(single, 3), "batch_speedup": round(batch, 3),
                   "embedder_speedup": round(min(single, batch), 3),
                   "embedder_cosine_min": round(float(cos.min()), 6), "cosine_mean": round(float(cos.mean()), 6),
                   "agreement_texts": len(all_texts)})
    return result


def main() -> None:
    json.dump(run(), sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
