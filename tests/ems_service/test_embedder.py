"""The real embedder: unit vectors, batching, model recorded, clear errors; a model mismatch stops start-up."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from sqlalchemy import update

from condenser import Trajectory, condense
from ems_service import Embedder, Runtime
from ems_service.errors import DimensionMismatch, EmbedderUnavailable
from ems_service.index.faiss import snapshot_path
from ems_service.index.faiss.snapshot import files as snapshot_files
from ems_service.repositories import Database, EpisodeRepository
from ems_service.tables import EpisodeRecord


def test_vectors_are_unit_float32_and_batched(embedder):
    texts = [f"find flights number {i}" for i in range(70)]
    one_by_one = np.stack([embedder.embed([t])[0] for t in texts[:3]])
    batch = embedder.embed(texts)
    assert batch.shape == (70, 384) and batch.dtype == np.float32
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    assert np.allclose(batch[:3], one_by_one, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)
    assert embedder.name.endswith("all-MiniLM-L6-v2") and embedder.dimension == 384


def test_missing_model_is_a_clear_start_up_error(tmp_path):
    with pytest.raises(EmbedderUnavailable, match="config.json missing"):
        Embedder(tmp_path)


@pytest.mark.faiss
@pytest.mark.parametrize("how", ["rows rewritten, no snapshot", "row added after the snapshot"])
def test_vectors_of_another_model_stop_start_up(settings, embedder, how):
    """Start-up checks every stored vector's model when it rebuilds, and the rows newer than the snapshot
    when it has one (those older were checked when the snapshot was made)."""
    rt = Runtime(settings, embedder=embedder).start(background=False)
    rt.ingest.ingest(namespace="default", trajectories=[Trajectory.model_validate(
        {"task": "t", "steps": [{"action": "click[1]"}]})])
    rt.close()  # writes the snapshot
    if how == "rows rewritten, no snapshot":
        with rt.db.session() as s:
            s.execute(update(EpisodeRecord).values(embedding_model="other-model", embedding_dim=768))
        for path in snapshot_files(snapshot_path(settings.data_dir, "default")):
            path.unlink(missing_ok=True)  # an exact index's snapshot has no .faiss
    else:
        episode = condense(Trajectory.model_validate({"task": "u", "steps": [{"action": "click[2]"}]}))
        EpisodeRepository(Database(settings.database_url)).insert([episode], np.ones((1, 768), dtype=np.float32), "other-model")
    with pytest.raises(DimensionMismatch, match="other-model"):
        Runtime(settings, embedder=embedder).start(background=False)


def _two_queued_behind_one(batcher, onnx, monkeypatch, texts: list[str], used: list[object]) -> dict:
    """While one request holds the model (its run held at a gate), one request per text queues; then all run:
    the queued ones are embedded together. Each model run's session goes into `used`."""
    run = type(onnx)._run.__get__(onnx)  # the class's own, not a test's recording stand-in
    gate, release = threading.Event(), threading.Event()

    def slow_run(session, encodings):
        used.append(session)
        if not gate.is_set():
            gate.set()
            release.wait(5)
        return run(session, encodings)

    monkeypatch.setattr(onnx, "_run", slow_run)
    out: dict[str, np.ndarray] = {}
    first = threading.Thread(target=lambda: out.update(first=batcher.embed(["a first request"])))
    first.start()
    assert gate.wait(5)
    queued = [threading.Thread(target=lambda t=t: out.update({t: batcher.embed([t])[0]})) for t in texts]
    for t in queued:
        t.start()
    deadline = time.monotonic() + 10
    while len(batcher._queue) < len(texts):
        assert time.monotonic() < deadline, "the requests never queued"
        time.sleep(0.001)
    release.set()
    for t in [first, *queued]:
        t.join(10)
    return out


def test_merged_requests_run_on_the_sleeping_session_and_one_request_on_the_spinning_one(monkeypatch):
    """One request's texts take the session whose threads spin between operators (latency, texts/s); texts of
    several concurrent requests merged by the batcher take the one whose threads sleep, leaving the cores to the
    requests' own work; the same vectors, within the graph's agreement."""
    from ems_service.batcher import BatchingEmbedder
    from ems_service.onnx_embedder import OnnxEmbedder, default_path, sibling

    onnx = OnnxEmbedder(sibling(default_path(), "all-MiniLM-L6-v2.selective-int8.onnx"), threads=2)
    spin = "session.intra_op.allow_spinning"
    assert onnx._bulk.get_session_options().get_session_config_entry(spin) == "0"
    with pytest.raises(RuntimeError, match="does not have configuration"):  # unset: ONNX Runtime's default, spin
        onnx._session.get_session_options().get_session_config_entry(spin)
    used: list[object] = []
    run = onnx._run
    monkeypatch.setattr(onnx, "_run", lambda session, encodings: used.append(session) or run(session, encodings))
    texts = ["book a table for two", "find the cheapest flight to Boston"]
    alone = np.vstack([onnx.embed([t]) for t in texts])
    one_request = onnx.embed(texts)
    assert used == [onnx._session] * 3
    used.clear()

    batcher = BatchingEmbedder(onnx, max_batch=64, max_wait_s=0.001)
    out = _two_queued_behind_one(batcher, onnx, monkeypatch, texts, used)
    assert used == [onnx._session, onnx._bulk] and batcher.batches == 2
    merged = np.vstack([out[t] for t in texts])
    # not bit-equal: the int8 MatMuls quantize their input per call, over the batch's (padded) rows
    assert float((alone * one_request).sum(axis=1).min()) >= 0.99
    assert float((alone * merged).sum(axis=1).min()) >= 0.99


def test_a_wrapper_forwarding_attributes_sees_merged_batches_in_its_own_embed(monkeypatch):
    """The batcher looks for `embed_merged` on the embedder's class: a wrapper that forwards attributes to an ONNX
    embedder (a spy checking what gets embedded) still sees every text, merged ones too, in its own `embed`."""
    from ems_service.batcher import BatchingEmbedder
    from ems_service.onnx_embedder import OnnxEmbedder, default_path, sibling

    onnx = OnnxEmbedder(sibling(default_path(), "all-MiniLM-L6-v2.selective-int8.onnx"), threads=2)

    class Spy:
        def __init__(self, inner) -> None:
            self.inner, self.seen = inner, []

        def __getattr__(self, name: str):
            return getattr(self.inner, name)

        def embed(self, texts):
            self.seen.append(list(texts))
            return self.inner.embed(texts)

    spy = Spy(onnx)
    texts = ["book a table for two", "find the cheapest flight to Boston"]
    used: list[object] = []
    out = _two_queued_behind_one(BatchingEmbedder(spy, max_batch=64, max_wait_s=0.001), onnx, monkeypatch, texts, used)
    assert spy.seen[0] == ["a first request"] and sorted(spy.seen[1]) == sorted(texts) and len(spy.seen) == 2
    assert set(out) == {"first", *texts}


def test_onnx_lanes_run_concurrent_calls_on_their_own_sessions_with_the_same_vectors():
    """With two lanes, calls that overlap run on their own sessions (the two-thread one and one-thread spares) and
    give the vectors one lane gives; afterwards the spares are back and nothing is counted as running."""
    import threading

    from ems_service.onnx_embedder import SEL8, OnnxEmbedder, default_path, sibling
    from tests.conftest import dev_records

    graph = sibling(default_path(), SEL8)
    texts = [r["task"] for r in dev_records("online_mind2web_abp.jsonl", 24)]
    one = OnnxEmbedder(graph)
    alone = np.stack([one.embed([t])[0] for t in texts])  # one text a call, as the workers call
    two = OnnxEmbedder(graph, lanes=2)
    used: set[int] = set()
    real_run = two._run

    def run(session, encodings):
        used.add(id(session))
        return real_run(session, encodings)

    two._run = run  # type: ignore[method-assign]
    out: dict[int, np.ndarray] = {}
    start = threading.Barrier(6)

    def worker(w: int) -> None:
        start.wait()
        for i in range(w, len(texts), 6):
            out[i] = two.embed([texts[i]])[0]

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert np.allclose(np.stack([out[i] for i in range(len(texts))]), alone, atol=1e-5)
    assert len(used) >= 2 and two._running == 0 and len(two._spare) == 2 and two.calls == len(texts)
    # merged batches (several requests' texts under load) run on the one-thread spares, never the two-thread session
    used.clear()
    merged = two.embed_merged(texts[:6])
    assert used and id(two._session) not in used and used <= {id(s) for s in two._spare}
    assert np.allclose(merged, alone[:6], atol=0.02)  # int8 quantizes each call over its rows: near, not equal


def test_a_graph_that_disagrees_is_refused(tmp_path):
    import json as _json

    from ems_service.onnx_embedder import OnnxEmbedder, default_path

    bad = tmp_path / "bad.onnx"
    bad.write_bytes(default_path().read_bytes())
    bad.with_suffix(".json").write_text(_json.dumps({"min_cosine": 0.5}))
    with pytest.raises(EmbedderUnavailable, match="does not agree"):
        OnnxEmbedder(bad)
    bad.with_suffix(".json").unlink()  # no recorded agreement: refused too
    with pytest.raises(EmbedderUnavailable, match="does not agree"):
        OnnxEmbedder(bad)


def test_backend_selection(settings, tmp_path, monkeypatch):
    """auto takes the fastest graph that agrees (selective int8), falls back to fp32 when that one's recorded
    agreement is too low, and to torch when no graph agrees; named backends never fall back."""
    import json as _json
    import shutil

    from ems_service.onnx_embedder import FP32, SEL8, default_path, runtime, sibling
    from ems_service.runtime import build_embedder

    assert build_embedder(settings).backend == "onnx_selective_int8"
    settings.embedder.backend = "onnx_fp32"
    assert build_embedder(settings).backend == "onnx_fp32"
    settings.embedder.backend = "torch"
    assert isinstance(build_embedder(settings), Embedder)

    # the same graphs in a folder of their own, with a recorded agreement we control
    folder = tmp_path / "share"
    folder.mkdir()
    for name in (FP32, SEL8):
        shutil.copy(sibling(default_path(), name), folder / name)
        shutil.copy(sibling(default_path(), name).with_suffix(".json"), (folder / name).with_suffix(".json"))
    (folder / SEL8).with_suffix(".json").write_text(_json.dumps({"min_cosine": 0.98}))
    settings.embedder.backend = "auto"
    monkeypatch.setattr(runtime, "default_path", lambda: folder / FP32)  # where `load` looks first
    assert build_embedder(settings).backend == "onnx_fp32"
    settings.embedder.backend = "onnx_selective_int8"
    with pytest.raises(EmbedderUnavailable, match="agrees"):
        build_embedder(settings)
    (folder / FP32).with_suffix(".json").write_text(_json.dumps({"min_cosine": 0.9}))
    settings.embedder.backend = "auto"
    assert isinstance(build_embedder(settings), Embedder)


def test_query_vectors_are_cached_per_namespace(settings, embedder):
    """A repeated query text is embedded once per namespace (a session's query stops changing after
    MAX_EMBED_ACTIONS actions); another tenant's identical text is embedded anew; size 0 turns it off."""
    rt = Runtime(settings, embedder=embedder).start(background=False)
    try:
        calls = embedder.calls
        first = rt.retrieval.embed_query("a", "find cheap flights")
        again = rt.retrieval.embed_query("a", "find cheap flights")
        assert embedder.calls == calls + 1 and again is first and not first.flags.writeable
        assert np.allclose(first, embedder.embed(["find cheap flights"])[0], atol=1e-6)
        rt.retrieval.embed_query("b", "find cheap flights")
        assert embedder.calls == calls + 3
        rt.settings.embedder.query_cache = 0
        rt.retrieval.embed_query("c", "find cheap flights")
        rt.retrieval.embed_query("c", "find cheap flights")
        assert embedder.calls == calls + 5
    finally:
        rt.close()


def test_a_lone_call_runs_its_micro_batches_on_the_spares_at_once_with_the_same_vectors():
    """A call alone with several micro-batches (an ingest's) runs them on the one-thread spares at once; a call that
    arrives meanwhile takes the two-thread session; an error in a micro-batch reaches the caller; afterwards the
    spares are back and nothing is counted as running."""
    from ems_service.onnx_embedder import SEL8, OnnxEmbedder, default_path, sibling
    from tests.conftest import dev_records

    graph = sibling(default_path(), SEL8)
    texts = [r["task"] for r in dev_records("online_mind2web_abp.jsonl", 96)]
    two = OnnxEmbedder(graph, lanes=2)
    spares = {id(s) for s in two._spare}
    used: list[tuple[int, str]] = []
    real_run = two._run
    meanwhile: dict[str, np.ndarray] = {}

    def run(session, encodings):
        used.append((id(session), threading.current_thread().name))
        if not meanwhile and len(used) == 1:  # another request arrives while the spares are lent
            other = threading.Thread(target=lambda: meanwhile.update(one=two.embed([texts[0]]),
                                                                     merged=two.embed_merged(texts[:2])))
            other.start()
            other.join(timeout=60)
        return real_run(session, encodings)

    two._run = run  # type: ignore[method-assign]
    parallel = two.embed(texts)
    lone = [u for u in used if u[0] in spares]
    assert {s for s, _ in lone} == spares and len({name for _, name in lone}) == 2  # both spares, two threads
    assert meanwhile["one"].shape == (1, 384) and meanwhile["merged"].shape == (2, 384)
    assert any(s == id(two._session) for s, _ in used)  # the call that came meanwhile ran on the lead's session
    assert two._running == 0 and {id(s) for s in two._spare} == spares

    used.clear()
    two.parallel_bulk = False
    serial = two.embed(texts)
    assert {s for s, _ in used} == {id(two._session)}
    assert np.allclose(parallel, serial, atol=1e-4)  # the same micro-batches, on sessions of other thread counts

    two.parallel_bulk = True

    def failing(session, encodings):
        if len(encodings) < 32:  # the last, shorter micro-batch
            raise RuntimeError("the graph failed")
        return real_run(session, encodings)

    two._run = failing  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="the graph failed"):
        two.embed(texts[:70])
    assert two._running == 0 and {id(s) for s in two._spare} == spares
