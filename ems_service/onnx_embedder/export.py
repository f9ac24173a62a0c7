"""The one-time export of the packaged sentence-transformers model to ONNX graphs, and their quantization.

The model is exported with `torch.onnx.export(..., dynamo=False)` (mean pooling and L2 normalization inside the
graph); no network. Two graphs are written: the fp32 graph and a selectively quantized one (int8 weights only in
the MatMuls whose rounding moves the vectors least, see SELECTIVE, three of them after smoothing their input, see
SMOOTHED). Each graph's agreement with the torch model (min and mean cosine on the probes and the texts shipped in
`agreement_texts.jsonl`) is stored next to it. A fully quantized graph (`--int8`) is opt-in. `make install` runs
this again whenever this module or `graphs` changes.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from ems_service.embeddings import MODEL_NAME, default_model_path
from ems_service.onnx_embedder.graphs import INT8, PROBES, SEL8, agreement_texts, sibling
from ems_service.onnx_embedder.runtime import OnnxEmbedder

logger = logging.getLogger(__name__)

# Which MatMuls the selective graph keeps in int8: those whose rounding moved the vectors least when each was
# quantized alone on top of the rest (measured on the dev texts and the shipped agreement texts): the attention
# query and key projections, the attention output, and the feed-forward up-projections but layer 4's. Left in
# fp32: the value projections, the feed-forward down-projections but those SMOOTHED below (their input has GELU
# outliers) and layer 4's up-projection (with it in int8 the one-token probe "x" fell to 0.9899; every real text
# stayed >= 0.996).
SELECTIVE = ("/query/", "/key/", "attention/output/", "/intermediate/")
SELECTIVE_KEPT = ("layer.4/intermediate/",)
# The feed-forward down-projections of these layers are in int8 too, after smoothing (SmoothQuant, Xiao et al.
# 2023): the GELU outliers sit in a few input channels, so each channel j of the MatMul's input is divided by
# s_j = max|x_j|^a / max|w_j|^(1-a) and row j of its weight multiplied by it (the product is unchanged; a Mul
# before the MatMul does the division), which moves the outliers into the weights, quantized per channel. Layers
# and strength chosen by `python -m benchmarks.smoothing` (min cosine with torch, agreement and dev texts): each
# layer alone at a = 0.75, layers 1, 3 and 5 cost least (at most 0.0006), layer 0 most (0.0020); all six together
# fell to 0.990; for 1, 3 and 5, a = 0.6 and 0.85 agreed worse on the agreement texts than 0.75. The single-text
# run got about 9% faster (4.43 -> 4.02 ms in that run).
SMOOTHED = ("layer.1/output/dense/", "layer.3/output/dense/", "layer.5/output/dense/")
SMOOTHING = 0.75
def _reference(model_dir: Path, texts: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model_dir), device="cpu", local_files_only=True).encode(
        texts, normalize_embeddings=True, convert_to_numpy=True)


def _record_agreement(path: Path, model_dir: Path, texts: list[str], reference: np.ndarray, **extra: str) -> dict:
    cos = (reference * OnnxEmbedder(path, model_dir=model_dir, check=False).embed(texts)).sum(axis=1)
    meta = {"model": MODEL_NAME, **extra, "min_cosine": round(float(cos.min()), 6),
            "mean_cosine": round(float(cos.mean()), 6), "probes": len(texts)}
    path.with_suffix(".json").write_text(json.dumps(meta))
    logger.info("ONNX graph %s: min cosine vs torch %.4f, mean %.4f", path.name, meta["min_cosine"],
                meta["mean_cosine"])
    return meta


def has_vnni(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU has VNNI (int8 dot products). Without it (AVX2 only) ONNX Runtime's u8s8 MatMul can saturate
    its 16-bit sums, so the weights are quantized unsigned (u8u8), as ONNX Runtime advises: on an AVX2-only AMD EPYC
    the selective graph's agreement was 0.986 with signed weights, under the 0.99 the service asks, and 0.993
    unsigned. The graph is exported on the machine that runs it (`make install`, the Dockerfile); where the flags
    cannot be read: unsigned."""
    try:
        flags = cpuinfo.read_text()
    except OSError:
        return False
    return "avx512_vnni" in flags or "avx_vnni" in flags


def _quantize(source: Path, target: Path, *, selective: bool, smoothed_layers: tuple[str, ...] = SMOOTHED,
              strength: float = SMOOTHING, model_dir: Path | None = None) -> None:
    """int8 weights (per channel, dynamic) in every MatMul; with `selective` only in SELECTIVE's but
    SELECTIVE_KEPT's, and in the MatMuls named by `smoothed_layers` (in place of SMOOTHED; each must name one),
    whose input is smoothed at `strength` first, calibrated on the agreement texts (tokenized by `model_dir`'s
    tokenizer). Nothing is left behind at `target` or beside it when a step fails."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    nodes = None
    tmp = target.with_suffix(".tmp.onnx")
    if selective:
        model = onnx.load(str(source))
        matmuls = [n for n in model.graph.node if n.op_type == "MatMul"]
        for pattern in smoothed_layers:
            if sum(pattern in n.name for n in matmuls) != 1:
                raise ValueError(f"{pattern!r} names {sum(pattern in n.name for n in matmuls)} MatMuls, not one")
        smoothed = [n for n in matmuls if any(p in n.name for p in smoothed_layers)]
        nodes = [n.name for n in smoothed] + [n.name for n in matmuls if any(p in n.name for p in SELECTIVE)
                                              and not any(p in n.name for p in SELECTIVE_KEPT)]
        smooth(model, smoothed, _input_maxima(model, [n.input[0] for n in smoothed], model_dir), strength)
    smoothed_path = target.with_suffix(".smoothed.tmp.onnx")
    try:
        if selective:
            onnx.save(model, str(smoothed_path))
            source = smoothed_path
        quantize_dynamic(str(source), str(tmp), weight_type=QuantType.QInt8 if has_vnni() else QuantType.QUInt8,
                         per_channel=True, nodes_to_quantize=nodes)
        os.replace(tmp, target)
    finally:
        smoothed_path.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)


def _input_maxima(graph: Any, tensors: list[str], model_dir: Path | None = None) -> dict[str, np.ndarray]:
    """The largest |value| of each channel (last axis) of each of `tensors` over the agreement texts, one text a
    run (no padding), in `graph` (an onnx ModelProto, left as it is); `model_dir`: whose tokenizer (default: the
    packaged model's)."""
    import onnx
    import onnxruntime as ort
    from tokenizers import Tokenizer

    if not tensors:
        return {}
    model = onnx.ModelProto()
    model.CopyFrom(graph)
    for name in tensors:
        model.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str((model_dir or default_model_path()) / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=256)
    maxima = {name: np.zeros(0, dtype=np.float32) for name in tensors}
    for text in agreement_texts():
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        outs = session.run(tensors, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                     "token_type_ids": np.zeros_like(ids)})
        for name, out in zip(tensors, outs, strict=True):
            channel_max = np.abs(out).reshape(-1, out.shape[-1]).max(axis=0)
            maxima[name] = channel_max if not maxima[name].size else np.maximum(maxima[name], channel_max)
    return maxima


def smooth(model: Any, matmuls: list, maxima: dict[str, np.ndarray], strength: float) -> None:
    """Smooth each of `matmuls` (onnx NodeProtos of `model`, an onnx ModelProto, whose second input is a weight)
    in place: its input divided per channel by s, its weight's rows multiplied by s (see SMOOTHED); `maxima` the
    input's largest |value| per channel, by tensor name."""
    from onnx import helper, numpy_helper

    weights = {init.name: init for init in model.graph.initializer}
    for node in matmuls:
        weight = numpy_helper.to_array(weights[node.input[1]])
        scale = (np.maximum(maxima[node.input[0]], 1e-5) ** strength
                 / np.maximum(np.abs(weight).max(axis=1), 1e-5) ** (1 - strength)).astype(np.float32)
        weights[node.input[1]].CopyFrom(numpy_helper.from_array(weight * scale[:, None], node.input[1]))
        inverse, divided = f"{node.name}/smooth_inverse", f"{node.name}/smoothed_input"
        model.graph.initializer.append(numpy_helper.from_array((1 / scale).astype(np.float32), inverse))
        position = list(model.graph.node).index(node)
        model.graph.node.insert(position, helper.make_node("Mul", [node.input[0], inverse], [divided],
                                                           name=f"{node.name}/smooth"))
        node.input[0] = divided


def _export_fp32(model_dir: Path, target: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    # eager attention, not SDPA: SDPA's export guards fully masked rows with Where/IsNaN ops at every layer (among
    # the largest operators in ONNX Runtime's profile of a 128-token run); the eager graph ran faster, single text
    # and batch, at the same agreement
    model = AutoModel.from_pretrained(model_dir, local_files_only=True, attn_implementation="eager").eval()

    class Pooled(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    token_type_ids: torch.Tensor) -> torch.Tensor:
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


def export(model_dir: Path, target: Path, *, int8: bool = False, texts: list[str] | None = None) -> list[dict]:
    """Export the fp32 graph to `target`, the selective int8 graph beside it (and the full int8 one when asked),
    each with a `.json` of its measured agreement with the torch model."""
    sample = agreement_texts() + list(texts or [])
    reference = _reference(model_dir, sample)
    _export_fp32(model_dir, target)
    metas = [_record_agreement(target, model_dir, sample, reference, graph="fp32")]
    _quantize(target, sibling(target, SEL8), selective=True, model_dir=model_dir)
    metas.append(_record_agreement(sibling(target, SEL8), model_dir, sample, reference,
                                   graph="int8 weights in 26 of 36 MatMuls (SELECTIVE, SMOOTHED), per-channel, dynamic"
                                   + ("" if has_vnni() else ", u8 weights (no VNNI)")))
    if int8:
        metas.append(quantize_int8(target, sibling(target, INT8), model_dir=model_dir, texts=texts,
                                   reference=reference))
    return metas


def quantize_int8(source: Path, target: Path, *, model_dir: Path | None = None, texts: list[str] | None = None,
                  reference: np.ndarray | None = None) -> dict:
    """Every MatMul in int8 (per-channel, dynamic), with its measured agreement with the torch model.

    Faster on batches, but not the same vectors: it is only used when asked for (backend `onnx_int8`), never
    by `auto`.
    """
    model_dir = model_dir or default_model_path()
    sample = agreement_texts() + list(texts or [])
    target.parent.mkdir(parents=True, exist_ok=True)
    _quantize(source, target, selective=False)
    reference = _reference(model_dir, sample) if reference is None else reference
    return _record_agreement(target, model_dir, sample, reference, graph="int8, per-channel, dynamic" + ("" if has_vnni() else ", u8 weights (no VNNI)"))
