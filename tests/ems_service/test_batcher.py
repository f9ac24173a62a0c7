"""Micro-batching of the embedder: concurrent requests share model calls, get their own vectors, pay nothing alone."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from ems_service.batcher import BatchingEmbedder


class _Counting:
    """Wraps the real embedder, recording each model call's size (and slowing it, as a loaded CPU does)."""

    def __init__(self, inner, delay: float = 0.0) -> None:
        self.inner, self.delay, self.sizes = inner, delay, []
        self.name, self.dimension = inner.name, inner.dimension

    def embed(self, texts):
        self.sizes.append(len(texts))
        time.sleep(self.delay)
        return self.inner.embed(texts)


TEXTS = [f"find the cheapest flight to city number {i} and book a window seat" for i in range(48)]


def test_concurrent_requests_share_model_calls_and_get_their_own_vectors(embedder):
    counting = _Counting(embedder, delay=0.02)
    batcher = BatchingEmbedder(counting, max_batch=64, max_wait_s=0.002)
    alone = embedder.embed(TEXTS)
    out: dict[int, np.ndarray] = {}
    start = threading.Barrier(16)

    def worker(w: int) -> None:
        start.wait()
        for i in range(w, len(TEXTS), 16):
            out[i] = batcher.embed([TEXTS[i]])[0]

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(out) == list(range(len(TEXTS)))
    assert np.allclose(np.stack([out[i] for i in range(len(TEXTS))]), alone, atol=1e-5)
    assert len(counting.sizes) < len(TEXTS) / 3 and max(counting.sizes) > 1, counting.sizes
    assert batcher.requests == len(TEXTS) and batcher.batches == len(counting.sizes)


def test_a_request_alone_goes_straight_to_the_model(embedder):
    """With a wait far longer than any model call, a request alone (or after one alone) still never waits."""
    counting = _Counting(embedder)
    batcher = BatchingEmbedder(counting, max_wait_s=5.0)
    for text in TEXTS[:5]:
        started = time.perf_counter()
        batcher.embed([text])
        assert time.perf_counter() - started < 4.0  # the 5 s wait was never taken
    assert counting.sizes == [1] * 5
    started = time.perf_counter()
    batcher.embed(TEXTS[:2])
    assert time.perf_counter() - started < 4.0 and counting.sizes[-1] == 2


def test_a_model_error_reaches_every_request_of_its_batch_and_the_batcher_recovers(embedder):
    class Failing(_Counting):
        def embed(self, texts):
            if any("boom" in t for t in texts):
                time.sleep(0.02)
                raise RuntimeError("model failed")
            return super().embed(texts)

    batcher = BatchingEmbedder(Failing(embedder), max_wait_s=0.0)
    with pytest.raises(RuntimeError, match="model failed"):
        batcher.embed(["boom"])
    assert batcher.embed(["fine"]).shape == (1, embedder.dimension)
    assert batcher.embed([]).shape == (0, embedder.dimension)
