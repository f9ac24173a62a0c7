"""Micro-batching of the embedder across concurrent requests.

One model session serves every route; one text at a time, a fleet's concurrent coach, search and session calls
queue behind each other. Here the texts that arrive while the model is busy are embedded together in its next
call (a leader/follower hand-off, no thread of its own): a request alone goes straight to the model and pays
nothing; under load, a leader that just saw other requests waits up to `max_wait_s` for more before it runs.
Results are the same vectors (each text is embedded independently; only padding groups change), in order.
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

    def __init__(self, inner: TextEmbedder, *, max_batch: int = 64, max_wait_s: float = 0.001) -> None:
        self.inner = inner
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self._lock = threading.Lock()
        self._queue: list[_Job] = []
        self._busy = False
        self._crowded = False  # the last batch held more than one request: wait a little for the next
        self.batches = 0
        self.requests = 0

    def __getattr__(self, name: str) -> object:  # name, dimension, backend, batch_size, calls, agreement ...
        return getattr(self.inner, name)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embeddings of `texts` (n, dimension), as the wrapped embedder gives them."""
        if not texts:
            return self.inner.embed(texts)
        job = _Job(list(texts))
        with self._lock:
            self._queue.append(job)
            self.requests += 1
            leading = not self._busy
            self._busy = True
        if not leading:
            job.done.wait()
            if not job.lead:
                return self._outcome(job)
        self._lead()
        return self._outcome(job)

    @staticmethod
    def _outcome(job: _Job) -> np.ndarray:
        if job.error is not None:
            raise job.error
        assert job.result is not None
        return job.result

    def _lead(self) -> None:
        """Embed the queue's first jobs (up to max_batch texts) in one call, then hand over or go idle."""
        if self._crowded and self.max_wait_s > 0:
            deadline = time.perf_counter() + self.max_wait_s
            while time.perf_counter() < deadline:
                with self._lock:
                    if sum(len(j.texts) for j in self._queue) >= self.max_batch:
                        break
                time.sleep(self.max_wait_s / 4)
        with self._lock:
            batch: list[_Job] = []
            size = 0
            while self._queue and (not batch or size + len(self._queue[0].texts) <= self.max_batch):
                job = self._queue.pop(0)
                batch.append(job)
                size += len(job.texts)
            self._crowded = len(batch) > 1 or bool(self._queue)
            self.batches += 1
        try:
            vectors = self.inner.embed([t for job in batch for t in job.texts])
            start = 0
            for job in batch:
                job.result = vectors[start:start + len(job.texts)]
                start += len(job.texts)
        except BaseException as exc:  # noqa: BLE001 - every waiting request gets the model's error
            for job in batch:
                job.error = exc
        finally:
            with self._lock:
                if self._queue:
                    nxt = self._queue[0]
                    nxt.lead = True
                    nxt.done.set()
                else:
                    self._busy = False
            for job in batch:
                job.done.set()
