"""ONNX Runtime backend for MiniLM (home of onnxruntime and of the one-time export from torch).

The packaged sentence-transformers model is exported once (mean pooling and L2 normalization inside the
graph) with `torch.onnx.export(..., dynamo=False)`; no network. Two graphs are written: the fp32 graph and a
selectively quantized one (int8 weights only in the MatMuls whose rounding moves the vectors least, see
SELECTIVE, three of them after smoothing their input, see SMOOTHED). Each graph's agreement with the torch model (min and mean cosine on the
probes and the texts shipped in `agreement_texts.jsonl`) is stored next to it; the service uses a graph only
when its minimum cosine is >= 0.99, the faster one first. A fully quantized graph (`--int8`) is opt-in.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ems_service.embeddings import MODEL_NAME, default_model_path
from ems_service.errors import EmbedderUnavailable

logger = logging.getLogger(__name__)

MIN_AGREEMENT = 0.99
INT8_MIN_AGREEMENT = 0.95  # the fully int8 graph is opt-in; it must still point the same way as the model
TOKEN_BUDGET = 384  # padded tokens per ONNX run: measured here, small runs of similar length beat one big one
FP32, SEL8, INT8 = "all-MiniLM-L6-v2.onnx", "all-MiniLM-L6-v2.selective-int8.onnx", "all-MiniLM-L6-v2.int8.onnx"
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
BACKENDS = {FP32: "onnx_fp32", SEL8: "onnx_selective_int8", INT8: "onnx_int8"}
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


def agreement_texts() -> list[str]:
    """The probes and the shipped sample of episode and query texts (`python -m benchmarks.agreement_texts`)."""
    shipped = resources.files("ems_service").joinpath("agreement_texts.jsonl").read_text(encoding="utf-8")
    return PROBES + [json.loads(line) for line in shipped.splitlines() if line]


def default_path() -> Path:
    """Where `webcoach embedder export` (run by `make install` and the Dockerfile) puts the fp32 graph: the
    Python environment's share folder; the other graphs lie beside it."""
    return Path(sys.prefix) / "share" / "webcoach" / FP32


def sibling(fp32: Path, name: str) -> Path:
    return fp32.with_name(name)


def int8_path(fp32: Path | None = None) -> Path:
    return sibling(fp32 or default_path(), INT8)


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


class OnnxEmbedder:
    """Same interface as Embedder: batched (padding-aware, by length), unit-length float32 vectors."""

    def __init__(self, path: Path, *, model_dir: Path | None = None, batch_size: int = 32, threads: int | None = None,
                 lanes: int | None = None, check: bool = True, min_agreement: float | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model_dir = model_dir or default_model_path()
        self.agreement = agreement(path)
        if check and self.agreement < (MIN_AGREEMENT if min_agreement is None else min_agreement):
            raise EmbedderUnavailable(f"ONNX graph at {path} does not agree with the torch model "
                                      f"(min cosine {self.agreement})")
        cores = os.cpu_count() or 1
        threads = threads or min(2, cores)
        # Two sessions of the graph for the run alone: one request's texts (`embed`: a query, an ingest) take one
        # whose threads spin between operators, waiting for the next (the lowest latency, the most texts/s); the
        # texts of several requests merged under load by ems_service.batcher (`embed_merged`) take one whose
        # threads sleep, leaving the cores to the requests' own work: 16 coach clients 119.3 -> 126.0 requests/s
        # (`python -m benchmarks.ab_serve --base 2d8888b`). The sleeping session for everything cost a lone request
        # time and batches texts/s; the cost of two: the graph held twice (about 80 MB more resident).
        self.lanes = lanes or 1
        self._session = _session(ort, path, threads)
        self._bulk = _session(ort, path, threads, spin=False) if threads > 1 and self.lanes == 1 else self._session
        # Concurrent requests, `lanes` > 1: a run alone takes the session above (all its threads: the lowest
        # latency); a run that starts while another is running, and every merged batch, takes a one-thread session
        # of its own, so that under load each core runs one batch at a time with no threads to synchronize
        # (`python -m benchmarks.embedder_concurrency`: 260 against 170 texts/s at 16 callers; README,
        # "Performance", the eighth session).
        # `lanes` runs at once; one one-thread session for each (the graph held once more for each).
        self._spare = [_session(ort, path, 1) for _ in range(self.lanes if self.lanes > 1 else 0)]
        self._running = 0
        self.parallel_bulk = True  # a lone call's micro-batches on the one-thread sessions at once (_lend_spares)
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=256)
        self._tokenizer.no_padding()
        self.backend = BACKENDS.get(path.name, "onnx_fp32")
        # the vector space: graphs that agree with torch (>= 0.99) share the model's name; the fully int8
        # graph does not (0.98), so its vectors are never mixed with stored ones unnoticed (start-up refuses)
        self.name = MODEL_NAME + "+int8" if self.backend == "onnx_int8" else MODEL_NAME
        self.dimension = 384
        self.batch_size = batch_size
        self.calls = 0
        self._runs = threading.BoundedSemaphore(self.lanes)
        self._lock = threading.Lock()

    def _run(self, session: Any, encodings: list) -> np.ndarray:  # an onnxruntime session; tokenizers.Encoding items
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        return session.run(None, {"input_ids": ids, "attention_mask": mask,
                                  "token_type_ids": np.zeros_like(ids)})[0]

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embeddings of `texts`, shape (n, 384), float32, unit length."""
        return self._embed_on(self._session, texts)

    def embed_merged(self, texts: list[str]) -> np.ndarray:
        """`embed` for the texts of several concurrent requests (ems_service.batcher): on a one-thread session when
        there are lanes, else on the session whose threads sleep."""
        return self._embed_on(self._bulk if self.lanes == 1 else None, texts)

    def _embed_on(self, lead: Any, texts: list[str]) -> np.ndarray:  # lead: an onnxruntime session, or None
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(texts)
        lengths = [len(e.ids) for e in encodings]
        with self._runs:
            with self._lock:
                self.calls += 1
                # (the spares may all be lent to a lone call's parallel micro-batches: then the lead's session)
                spare = bool(self._spare) and (lead is None or self._running > 0)
                session = self._spare.pop() if spare else lead if lead is not None else self._session
                self._running += 1
            try:
                return self._embed(session, encodings, lengths)
            finally:
                with self._lock:
                    self._running -= 1
                    if spare:
                        self._spare.append(session)

    def _embed(self, session: Any, encodings: list, lengths: list[int]) -> np.ndarray:
        order = np.argsort(lengths, kind="stable")  # similar lengths share a micro-batch: little padding
        out = np.zeros((len(encodings), self.dimension), dtype=np.float32)
        groups: list[list[int]] = [[]]
        for i in order:
            # a micro-batch holds at most `batch_size` texts and TOKEN_BUDGET padded tokens
            group = groups[-1]
            if group and (len(group) >= self.batch_size or (len(group) + 1) * lengths[i] > TOKEN_BUDGET):
                groups.append(group := [])
            group.append(int(i))
        spares = self._lend_spares(session) if self.parallel_bulk and len(groups) > 1 else []
        if not spares:
            for group in groups:
                out[group] = self._run(session, [encodings[j] for j in group])
            return out
        try:
            self._run_parallel(spares, groups, encodings, out)
        finally:
            with self._lock:
                self._spare.extend(spares)
        return out

    def _lend_spares(self, session: Any) -> list[Any]:
        """The one-thread sessions, for a call that runs alone on the lead's session with several micro-batches:
        each core then runs one micro-batch at a time on a session of its own, no threads to synchronize
        (`python -m benchmarks.embedder_bulk`). None when another call runs."""
        with self._lock:
            if session is not self._session or self._running != 1 or len(self._spare) < 2:
                return []
            spares, self._spare = self._spare, []
            return spares

    def _run_parallel(self, sessions: list[Any], groups: list[list[int]], encodings: list, out: np.ndarray) -> None:
        """The micro-batches `groups` run on `sessions` at once (ONNX Runtime releases the GIL), each session taking
        the next micro-batch when it is done; the first error is raised once all have stopped."""
        pending = iter(groups)
        take = threading.Lock()
        errors: list[Exception] = []

        def work(session: Any) -> None:
            while not errors:
                with take:
                    group = next(pending, None)
                if group is None:
                    return
                try:
                    out[group] = self._run(session, [encodings[j] for j in group])
                except Exception as exc:  # noqa: BLE001 - re-raised in the calling thread below
                    errors.append(exc)

        helpers = [threading.Thread(target=work, args=(s,), name="embedder-lane", daemon=True) for s in sessions[1:]]
        for helper in helpers:
            helper.start()
        work(sessions[0])
        for helper in helpers:
            helper.join()
        if errors:
            raise errors[0]


def _session(ort: Any, path: Path, threads: int, *, spin: bool = True) -> Any:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    if not spin:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def agreement(graph: Path) -> float:
    """The minimum cosine with the torch model recorded for `graph` at export (0 when none was)."""
    meta_path = graph.with_suffix(".json")
    return float(json.loads(meta_path.read_text()).get("min_cosine", 0.0)) if meta_path.exists() else 0.0


def load_int8(path: Path | None, *, batch_size: int, lanes: int | None = None) -> OnnxEmbedder:
    """The fully int8 graph (`webcoach embedder export --int8`); an error when it was not made."""
    target = path or int8_path()
    if not target.exists():
        raise EmbedderUnavailable(f"no int8 graph at {target}: run `webcoach embedder export --int8`")
    return OnnxEmbedder(target, batch_size=batch_size, lanes=lanes, min_agreement=INT8_MIN_AGREEMENT)


def load(path: Path | None, data_dir: Path, *, batch_size: int, graphs: tuple[str, ...] = (SEL8, FP32),
         lanes: int | None = None) -> OnnxEmbedder:
    """The first of `graphs` (fastest first) that was exported and agrees with torch; `path` pins one graph.
    Exported on first use when the install did not export it."""
    if path is not None:
        if not path.exists():
            export(default_model_path(), path)
        return OnnxEmbedder(path, batch_size=batch_size, lanes=lanes)
    folders = [default_path().parent, data_dir / "models"]
    for folder in folders:
        for name in graphs:
            if agreement(folder / name) >= MIN_AGREEMENT and (folder / name).exists():
                return OnnxEmbedder(folder / name, batch_size=batch_size, lanes=lanes)
    if any((folder / name).exists() for folder in folders for name in graphs):
        raise EmbedderUnavailable(f"no exported ONNX graph among {', '.join(graphs)} agrees with the torch model")
    target = default_path() if os.access(Path(sys.prefix), os.W_OK) else data_dir / "models" / FP32
    export(default_model_path(), target)
    return load(None, data_dir, batch_size=batch_size, graphs=graphs, lanes=lanes)
