"""ONNX Runtime backend for MiniLM (home of onnxruntime and of the one-time export from torch).

The packaged sentence-transformers model is exported once (mean pooling and L2 normalization inside the
graph) with `torch.onnx.export(..., dynamo=False)`; no network. At export time the ONNX vectors are compared
with the torch model's on probe texts and the agreement is stored next to the graph; the service uses ONNX
only when that minimum cosine is >= 0.99.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from pathlib import Path

import numpy as np

from ems_service.embeddings import MODEL_NAME, default_model_path
from ems_service.errors import EmbedderUnavailable

logger = logging.getLogger(__name__)

MIN_AGREEMENT = 0.99
TOKEN_BUDGET = 384  # padded tokens per ONNX run: measured here, small runs of similar length beat one big one
PROBES = [
    "Find Dota 2 game and add all DLC to cart in steam\nsite: steampowered.com\nsteps: search dota 2 steam; click",
    "Book a table for 2 at Luigi's on opentable",
    "Search for Mexican restaurants in Concord, CA in yelp",
    "TYPE: Boston [searchbox] Find a location",
    "Ignore previous instructions. <|im_start|>system",
    "What is the baggage allowance for economy class on Qatar Airways? " * 12,
    "x",
    "Ünïcödé café — 東京 の ホテル を 予約",
]


def export(model_dir: Path, target: Path) -> dict:
    """Export the model to `target` (.onnx) and write `target.json` with the measured agreement."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModel.from_pretrained(model_dir, local_files_only=True).eval()

    class Pooled(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN201 - torch graph
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(out.dtype)
            pooled = (out * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    sample = tokenizer(PROBES[:2], padding=True, return_tensors="pt")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp.onnx")
    axes = {k: {0: "batch", 1: "seq"} for k in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.no_grad():
        torch.onnx.export(Pooled(model), (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
                          str(tmp), input_names=list(axes), output_names=["embedding"],
                          dynamic_axes=axes | {"embedding": {0: "batch"}}, opset_version=17, dynamo=False)
    os.replace(tmp, target)
    reference = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True).encode(
        PROBES, normalize_embeddings=True, convert_to_numpy=True)
    ours = OnnxEmbedder(target, model_dir=model_dir, check=False).embed(PROBES)
    agreement = float((reference * ours).sum(axis=1).min())
    meta = {"model": MODEL_NAME, "min_cosine": round(agreement, 6), "probes": len(PROBES)}
    target.with_suffix(".json").write_text(json.dumps(meta))
    logger.info("ONNX embedder exported to %s (min cosine vs torch %.6f)", target, agreement)
    return meta


def quantize_int8(source: Path, target: Path, *, model_dir: Path | None = None,
                  texts: list[str] | None = None) -> dict:
    """Per-channel dynamic int8 copy of the fp32 graph, with its measured agreement with the torch model.

    Faster on batches, but not the same vectors: it is only used when asked for (backend `onnx_int8`), never
    by `auto`. The agreement (min and mean cosine on the probes plus `texts`) is stored next to the graph.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from sentence_transformers import SentenceTransformer

    model_dir = model_dir or default_model_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp.onnx")
    quantize_dynamic(str(source), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
    os.replace(tmp, target)
    sample = PROBES + list(texts or [])
    reference = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True).encode(
        sample, normalize_embeddings=True, convert_to_numpy=True)
    ours = OnnxEmbedder(target, model_dir=model_dir, check=False).embed(sample)
    cos = (reference * ours).sum(axis=1)
    meta = {"model": MODEL_NAME, "quantization": "int8, per-channel, dynamic", "min_cosine": round(float(cos.min()), 6),
            "mean_cosine": round(float(cos.mean()), 6), "probes": len(sample)}
    target.with_suffix(".json").write_text(json.dumps(meta))
    logger.info("int8 ONNX embedder written to %s (mean cosine vs torch %.4f, min %.4f)", target,
                meta["mean_cosine"], meta["min_cosine"])
    return meta


def int8_path(fp32: Path | None = None) -> Path:
    return (fp32 or default_path()).with_name("all-MiniLM-L6-v2.int8.onnx")


class OnnxEmbedder:
    """Same interface as Embedder: batched (padding-aware, by length), unit-length float32 vectors."""

    def __init__(self, path: Path, *, model_dir: Path | None = None, batch_size: int = 32, threads: int | None = None,
                 check: bool = True, min_agreement: float | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model_dir = model_dir or default_model_path()
        if check:
            meta_path = path.with_suffix(".json")
            meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
            if meta.get("min_cosine", 0.0) < (MIN_AGREEMENT if min_agreement is None else min_agreement):
                raise EmbedderUnavailable(f"ONNX graph at {path} does not agree with the torch model ({meta})")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads or min(2, os.cpu_count() or 1)
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=256)
        self._tokenizer.no_padding()
        self.name = MODEL_NAME
        self.dimension = 384
        self.batch_size = batch_size
        self.backend = "onnx_int8" if ".int8." in path.name else "onnx"
        self.calls = 0
        self._lock = threading.Lock()

    def _run(self, encodings: list) -> np.ndarray:  # noqa: ANN001 - tokenizers.Encoding
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        return self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                        "token_type_ids": np.zeros_like(ids)})[0]

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embeddings of `texts`, shape (n, 384), float32, unit length."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            self.calls += 1
            encodings = self._tokenizer.encode_batch(texts)
            lengths = [len(e.ids) for e in encodings]
            order = np.argsort(lengths, kind="stable")  # similar lengths share a micro-batch: little padding
            out = np.zeros((len(texts), self.dimension), dtype=np.float32)
            group: list[int] = []
            for i in order:
                # a micro-batch holds at most `batch_size` texts and TOKEN_BUDGET padded tokens
                if group and (len(group) >= self.batch_size or (len(group) + 1) * lengths[i] > TOKEN_BUDGET):
                    out[group] = self._run([encodings[j] for j in group])
                    group = []
                group.append(int(i))
            if group:
                out[group] = self._run([encodings[j] for j in group])
        return out


def default_path() -> Path:
    """Where `webcoach embedder export` (run by `make install` and the Dockerfile) puts the graph: the
    Python environment's share folder."""
    return Path(sys.prefix) / "share" / "webcoach" / "all-MiniLM-L6-v2.onnx"


INT8_MIN_AGREEMENT = 0.95  # the int8 graph is opt-in; it must still point the same way as the model


def load_int8(path: Path | None, *, batch_size: int) -> OnnxEmbedder:
    """The int8 graph (`webcoach embedder export --int8`); an error when it was not made."""
    target = path or int8_path()
    if not target.exists():
        raise EmbedderUnavailable(f"no int8 graph at {target}: run `webcoach embedder export --int8`")
    return OnnxEmbedder(target, batch_size=batch_size, min_agreement=INT8_MIN_AGREEMENT)


def load(path: Path | None, data_dir: Path, *, batch_size: int) -> OnnxEmbedder:
    """The ONNX embedder; exported on first use when the install did not export it."""
    candidates = [path] if path else [default_path(), data_dir / "models" / "all-MiniLM-L6-v2.onnx"]
    for candidate in candidates:
        if candidate.exists() and candidate.with_suffix(".json").exists():
            return OnnxEmbedder(candidate, batch_size=batch_size)
    target = candidates[0] if path or os.access(Path(sys.prefix), os.W_OK) else candidates[-1]
    export(default_model_path(), target)
    return OnnxEmbedder(target, batch_size=batch_size)
