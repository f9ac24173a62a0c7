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


class _Overlapping(_Counting):
    """Records how many model calls overlap (the batcher's lanes), each call a little slow."""

    def __init__(self, inner, delay: float) -> None:
        super().__init__(inner, delay)
        self.running = self.most = 0
        self._guard = threading.Lock()

    def embed(self, texts):
        with self._guard:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            return super().embed(texts)
        finally:
            with self._guard:
                self.running -= 1


@pytest.mark.parametrize("lanes", [1, 2, 3])
def test_lanes_bound_the_model_calls_at_once_and_every_request_gets_its_own_vectors(embedder, lanes):
    """Under 24 threads' load (random text counts, no wait), at most `lanes` model calls run at once and all of them
    are used; each request gets its own texts' vectors; afterwards no lane is held (a hand-over lost or given twice
    would hold one, or hang)."""
    inner = _Overlapping(embedder, delay=0.005)
    batcher = BatchingEmbedder(inner, max_batch=8, max_wait_s=0.0, lanes=lanes)
    expected = {t: v for t, v in zip(TEXTS, embedder.embed(TEXTS), strict=True)}
    errors: list[str] = []
    start = threading.Barrier(24)

    sent = [0] * 24

    def worker(w: int) -> None:
        rng = np.random.default_rng(w)
        start.wait()
        try:
            for _ in range(6):
                texts = [TEXTS[i] for i in rng.choice(len(TEXTS), int(rng.integers(1, 4)), replace=False)]
                sent[w] += len(texts)
                got = batcher.embed(texts)
                if got.shape != (len(texts), embedder.dimension) or not np.allclose(
                        got, np.stack([expected[t] for t in texts]), atol=1e-5):
                    errors.append(f"worker {w}: wrong vectors")
        except BaseException as exc:  # noqa: BLE001 - a thread's error must fail the test, not warn
            errors.append(f"worker {w}: {exc!r}")

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a request never got its vectors"
    assert not errors
    assert inner.most == lanes, (inner.most, lanes)
    assert batcher._leading == 0 and not batcher._queue
    assert batcher.requests == 24 * 6 and max(inner.sizes) <= 8
    assert sum(inner.sizes) == sum(sent) and batcher.batches == len(inner.sizes)  # each text embedded once


def test_with_two_lanes_a_model_error_reaches_its_requests_and_frees_the_lane(embedder):
    class Failing(_Overlapping):
        def embed(self, texts):
            if any("boom" in t for t in texts):
                time.sleep(0.02)
                raise RuntimeError("model failed")
            return super().embed(texts)

    batcher = BatchingEmbedder(Failing(embedder, delay=0.02), max_wait_s=0.0, lanes=2)
    outcomes: dict[str, str] = {}

    def call(text: str) -> None:
        try:
            batcher.embed([text])
            outcomes[text] = "ok"
        except RuntimeError as exc:
            outcomes[text] = str(exc)

    threads = [threading.Thread(target=call, args=(t,)) for t in ["boom", "fine one", "fine two", "fine three"]]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert outcomes["boom"] == "model failed"
    assert batcher._leading == 0 and not batcher._queue
    assert batcher.embed(["after"]).shape == (1, embedder.dimension)


class _Costed:
    """A model whose cost is set: a cost per call and per text (a machine where merging pays: a call's cost), or one
    where a batch costs what its texts cost alone (`one_by_one`). The vectors are the real model's, computed once up
    front, so a call costs exactly its sleep: a loaded CI machine's model time cannot tip the timing either way (it
    once timed 35.6 ms alone against 25.5 merged on a machine set to cost the same)."""

    def __init__(self, inner, *, per_call: float, per_text: float, one_by_one: bool = False) -> None:
        self.per_call, self.per_text, self.one_by_one = per_call, per_text, one_by_one
        self.name, self.dimension = inner.name, inner.dimension
        self.kept = dict(zip(TEXTS, inner.embed(TEXTS), strict=True))
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        if self.one_by_one:
            for _ in texts:
                time.sleep(self.per_call + self.per_text)
        else:
            time.sleep(self.per_call + self.per_text * len(texts))
        return np.stack([self.kept[t] for t in texts]) if texts else np.zeros((0, self.dimension), np.float32)


@pytest.mark.parametrize(("per_call", "per_text", "merging"), [(0.02, 0.0, True), (0.0, 0.02, False)])
def test_calibration_keeps_merging_only_where_it_pays(embedder, per_call, per_text, merging):
    costed = _Costed(embedder, per_call=per_call, per_text=per_text, one_by_one=not merging)
    batcher = BatchingEmbedder(costed, max_batch=64)
    found = batcher.calibrate(TEXTS[:8], rounds=1)
    assert found["merging"] is merging and batcher.calibration == found
    assert batcher.max_batch == (64 if merging else 1)
    assert found["single_ms_per_text"] > 0 and found["merged_ms_per_text"] > 0


def test_the_first_contention_times_the_model_once_and_a_lone_caller_never_does(embedder):
    batcher = BatchingEmbedder(_Costed(embedder, per_call=0.0, per_text=0.01, one_by_one=True), max_batch=64, lanes=1,
                               calibrate=TEXTS[:4])
    for text in TEXTS[:5]:  # one caller at a time: no contention, no timing
        batcher.embed([text])
    assert batcher.calibration is None
    start = threading.Barrier(4)

    def worker(i: int) -> None:
        start.wait()
        batcher.embed([TEXTS[i]])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    deadline = time.monotonic() + 30
    while batcher.calibration is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert batcher.calibration is not None and batcher.calibration["merging"] is False and batcher.max_batch == 1
    assert batcher._probe == []  # once


@pytest.mark.parametrize(("mode", "max_batch", "timed"), [("off", 1, False), ("on", 64, False), ("auto", 64, True)])
def test_the_setting_decides_merging_and_stats_say_what_was_chosen(make_client, settings, mode, max_batch, timed):
    settings.embedder.micro_batch = mode
    with make_client(settings) as c:
        stats = c.get("/v1/stats").json()
        assert stats["micro_batch"] == {"max_batch": max_batch, "calibration": None}  # nothing timed before contention
        assert bool(c.app.state.runtime.embedder._probe) is timed  # the texts to time the model on, at contention


def test_closing_stops_a_timing_under_way_and_none_starts_after(embedder):
    """A runtime closed while the model was being timed in the background went on calling the model (a restart test
    counted two more model calls than its own)."""
    costed = _Costed(embedder, per_call=0.05, per_text=0.0, one_by_one=True)
    batcher = BatchingEmbedder(costed, max_batch=64, lanes=1, calibrate=TEXTS[:16])
    batcher._timing = threading.Thread(target=batcher.calibrate, args=(TEXTS[:16],), daemon=True)
    batcher._timing.start()
    time.sleep(0.12)
    batcher.close()
    assert not batcher._timing.is_alive() and batcher.calibration is None and batcher.max_batch == 64
    calls = costed.calls
    start = threading.Barrier(2)

    def worker(i: int) -> None:
        start.wait()
        batcher.embed([TEXTS[i]])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert batcher._timing is not None and not batcher._timing.is_alive()  # no new timing after close
    assert costed.calls == calls + 2  # the two requests' own calls only
