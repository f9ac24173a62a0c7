"""Micro-batching of the embedder across concurrent requests.

One model serves every route; one text at a time, a fleet's concurrent coach, search and session calls
queue behind each other. Here the texts that arrive while the model is busy are embedded together in its next
call (a leader/follower hand-off, no thread of its own): a request alone goes straight to the model and pays
nothing; under load, a leader that just saw other requests waits up to `max_wait_s` for more before it runs.
Results are each text's own vector, in order (each text is embedded independently; only padding groups change, and
the int8 graph quantizes each call's input over its rows: a text merged with others agrees with its vector alone
to within the graph's agreement, not bit for bit).

Whether merging pays depends on the machine: on some a batch of 16 costs the model far less per text than 16 calls
(SIMD-wide kernels fill up), on others about the same (benchmarks/results: 250 texts/s in batches of 32 against 262
single texts/s on one VM), and there merging only adds hand-offs (16 coach clients 71 against 84 requests/s,
`make bench`). `calibrate`: on the first contention (two requests at once), time the model both ways once, in a
thread of its own, on the given texts; keep merging only when a batch's text costs at most `PAYS` of a single call's
(EMS_EMBEDDER__MICRO_BATCH=auto; `on` / `off` decide without timing).

`lanes`: model calls that may run at once (the embedder's own `lanes`, EMS_EMBEDDER__LANES, 2 by default: under
load each runs on a one-thread ONNX session, benchmarks/embedder_concurrency.py). A request alone takes one lane; a second request
while one runs takes the next free lane instead of queueing; a leader that finishes hands its lane to the next
queued request (taken off the queue, so that no other leader embeds it as well).
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

import numpy as np


class TextEmbedder(Protocol):
    name: str
    dimension: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


class _Job:
    __slots__ = ("done", "error", "lead", "result", "texts")

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.done = threading.Event()
        self.result: np.ndarray | None = None
        self.error: BaseException | None = None
        self.lead = False


class BatchingEmbedder:
    """The same interface as the embedder it wraps (`embed`, `name`, `dimension`, ...), batching across threads."""

    name: str  # read through to the wrapped embedder (__getattr__), like every attribute not set here
    dimension: int

    PAYS = 0.85  # a merged text must cost at most this share of a text embedded alone for merging to stay on

    def __init__(self, inner: TextEmbedder, *, max_batch: int = 64, max_wait_s: float = 0.001,
                 lanes: int = 1, calibrate: list[str] | None = None) -> None:
        self.inner = inner
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self.lanes = max(1, lanes)
        self._lock = threading.Lock()
        self._queue: list[_Job] = []
        self._leading = 0  # model calls running (at most `lanes`)
        self._crowded = False  # the last batch held more than one request: wait a little for the next
        self.batches = 0
        self.requests = 0
        self._probe = list(calibrate or [])[:16]  # texts to time the model on at the first contention (then none)
        self.calibration: dict[str, float | bool] | None = None  # what it measured and chose (GET /v1/stats)
        self._timing: threading.Thread | None = None
        self._closed = threading.Event()

    def __getattr__(self, name: str) -> object:  # name, dimension, backend, batch_size, calls, agreement ...
        return getattr(self.inner, name)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embeddings of `texts` (n, dimension), as the wrapped embedder gives them."""
        if not texts:
            return self.inner.embed(texts)
        job = _Job(list(texts))
        with self._lock:
            self.requests += 1
            leading = self._leading < self.lanes
            if leading:
                self._leading += 1
            else:
                self._queue.append(job)
            probe = self._probe if self._leading > 1 or not leading else None
            if probe:
                self._probe = []  # once
        if probe and not self._closed.is_set():
            self._timing = threading.Thread(target=self.calibrate, args=(probe,), name="embedder-calibrate",
                                            daemon=True)
            self._timing.start()
        if not leading:
            try:
                job.done.wait()
            except BaseException:  # interrupted while queued: leave no job behind and no lane unheld
                with self._lock:
                    if job in self._queue:
                        self._queue.remove(job)
                    elif job.lead:
                        self._hand_over()
                raise
            if not job.lead:  # a leader embedded it
                return self._outcome(job)
        self._lead(job)  # a free lane, or one handed over by a leader that finished
        return self._outcome(job)

    def calibrate(self, texts: list[str], rounds: int = 3) -> dict[str, float | bool]:
        """Time the model on `texts` one at a time and merged (the median of `rounds`, on the call merged batches
        take), and keep merging only if it pays (a merged text at most PAYS of a single one's time); returns and
        keeps what it measured."""
        embed = self.inner.embed_merged if hasattr(type(self.inner), "embed_merged") else self.inner.embed  # type: ignore[attr-defined]  # checked
        single, merged = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            for text in texts:
                if self._closed.is_set():
                    return {"merging": self.max_batch > 1}  # closed mid-way: nothing measured, nothing changed
                embed([text])
            t1 = time.perf_counter()
            embed(texts)
            t2 = time.perf_counter()
            single.append((t1 - t0) / len(texts))
            merged.append((t2 - t1) / len(texts))
        alone, together = sorted(single)[rounds // 2], sorted(merged)[rounds // 2]
        pays = together <= self.PAYS * alone
        if not pays:
            self.max_batch = 1  # each request its own model call: the lanes still run them side by side
        self.calibration = {"single_ms_per_text": round(alone * 1000, 3), "merged_ms_per_text": round(together * 1000, 3),
                            "merging": pays}
        return self.calibration

    def close(self) -> None:
        """Stop a timing of the model under way (between two texts) and wait for it; no timing starts after."""
        self._closed.set()
        if self._timing is not None:
            self._timing.join(timeout=30)

    @staticmethod
    def _outcome(job: _Job) -> np.ndarray:
        if job.error is not None:
            raise job.error
        assert job.result is not None
        return job.result

    def _lead(self, own: _Job) -> None:
        """Embed `own` and the queue's first jobs (up to max_batch texts) in one call, then hand the lane over or
        free it. A leader handed its lane under load (`crowded`) first waits up to max_wait_s for more texts; one
        that found a lane free never waits."""
        batch = [own]
        try:
            if own.lead and self._crowded and self.max_wait_s > 0:
                deadline = time.perf_counter() + self.max_wait_s
                while time.perf_counter() < deadline:
                    with self._lock:
                        if len(own.texts) + sum(len(j.texts) for j in self._queue) >= self.max_batch:
                            break
                    time.sleep(self.max_wait_s / 4)
            with self._lock:
                size = len(own.texts)
                while self._queue and size + len(self._queue[0].texts) <= self.max_batch:
                    job = self._queue.pop(0)
                    batch.append(job)
                    size += len(job.texts)
                self._crowded = len(batch) > 1 or bool(self._queue)
                self.batches += 1
                shared = len(batch) > 1 or self._leading > 1  # other requests' texts here, or another lane running
            # under load (several requests' texts, or another lane's call running): the embedder's call for that
            # when its class has one (ONNX: a one-thread session with lanes, else a session whose threads sleep
            # between operators, leaving the cores to the requests); looked up on the class, so that a wrapper
            # forwarding attributes to an embedder keeps seeing every text in its `embed`
            merged = shared and hasattr(type(self.inner), "embed_merged")
            embed = self.inner.embed_merged if merged else self.inner.embed  # type: ignore[attr-defined]  # checked above
            vectors = embed([t for job in batch for t in job.texts])
            start = 0
            for job in batch:
                job.result = vectors[start:start + len(job.texts)]
                start += len(job.texts)
        except BaseException as exc:  # noqa: BLE001 - every waiting request gets the model's error
            for job in batch:
                job.error = exc
        finally:
            with self._lock:
                self._hand_over()
            for job in batch:
                if job is not own:
                    job.done.set()

    def _hand_over(self) -> None:
        """With the lock held: give this lane to the next queued job (off the queue: no other leader embeds it),
        or free it."""
        if self._queue:
            nxt = self._queue.pop(0)
            nxt.lead = True
            nxt.done.set()
        else:
            self._leading -= 1
