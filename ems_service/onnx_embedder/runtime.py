"""ONNX Runtime sessions of an exported MiniLM graph: the service's embedder (same interface as `Embedder`), batched by
length, on one session whose threads spin for a lone call and one-thread sessions (lanes) for concurrent ones."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np

from ems_service.embeddings import MODEL_NAME, default_model_path
from ems_service.errors import EmbedderUnavailable
from ems_service.onnx_embedder.graphs import (
    BACKENDS,
    FP32,
    INT8_MIN_AGREEMENT,
    MIN_AGREEMENT,
    SEL8,
    agreement,
    default_path,
    int8_path,
)

TOKEN_BUDGET = 384  # padded tokens per ONNX run: measured here, small runs of similar length beat one big one


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
    from ems_service.onnx_embedder.export import export  # torch and the quantizer: only when no graph was made

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
