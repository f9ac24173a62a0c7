"""Whether ingest could hide its condensing behind the embedder: the raw embedder's wall and CPU seconds on the
episode texts of one file, and condense-then-embed done in turn against overlapped (a thread condenses the next
chunk of 64 runs while the model embeds this one), each on the default ONNX graph's two-thread session with spinning
threads (what `embed` takes) and with sleeping ones; and the raw embedder on two one-thread lanes (each chunk's two
halves at once).

Run: `python -m benchmarks.ingest_overlap` (prints JSON: medians of 5 runs, after one to warm up). Reads the
embedder's sessions directly (ems_service.onnx_embedder): a measurement of its parts, not of the service.
"""

from __future__ import annotations

import json
import queue
import resource
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from benchmarks.common import DATA
from condenser import condense
from ems_service import Settings
from ems_service.dataset import read_jsonl
from ems_service.onnx_embedder import OnnxEmbedder
from ems_service.onnx_embedder.runtime import _session
from ems_service.runtime import build_embedder

CHUNK = 64


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(run: Callable[[], object], repeats: int = 5) -> dict[str, float]:
    run()
    walls, cpus = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), _cpu()
        run()
        walls.append(time.perf_counter() - t)
        cpus.append(_cpu() - c)
    return {"wall_s": round(statistics.median(walls), 3), "cpu_s": round(statistics.median(cpus), 3)}


def main(file: str = "webcanvas.jsonl") -> dict:
    import onnxruntime as ort

    emb = build_embedder(Settings(data_dir=tempfile.mkdtemp(), _env_file=None))
    inner: OnnxEmbedder = getattr(emb, "inner", emb)
    if not isinstance(inner, OnnxEmbedder):
        raise SystemExit(f"the default embedder is {type(inner).__name__}, not ONNX: nothing to measure")
    runs = [ln.trajectory for ln in read_jsonl(DATA / file) if ln.trajectory]
    chunks = [runs[i:i + CHUNK] for i in range(0, len(runs), CHUNK)]
    texts = [[condense(t).embed_text for t in chunk] for chunk in chunks]
    spinning: Any = inner._session
    sleeping = _session(ort, inner._session._model_path, 2, spin=False)

    def raw(session: Any) -> Callable[[], object]:
        return lambda: [inner._embed_on(session, chunk) for chunk in texts]

    def in_turn(session: Any) -> Callable[[], object]:
        return lambda: [inner._embed_on(session, [condense(t).embed_text for t in chunk]) for chunk in chunks]

    def overlapped(session: Any) -> Callable[[], None]:
        def run() -> None:
            ready: queue.Queue[list[str] | None] = queue.Queue(maxsize=2)

            def condense_ahead() -> None:
                for chunk in chunks:
                    ready.put([condense(t).embed_text for t in chunk])
                ready.put(None)

            worker = threading.Thread(target=condense_ahead)
            worker.start()
            while (chunk_texts := ready.get()) is not None:
                inner._embed_on(session, chunk_texts)
            worker.join()
        return run

    def two_lanes() -> None:  # None: a one-thread session of the embedder's lanes for each half
        for chunk in texts:
            half = len(chunk) // 2
            other = threading.Thread(target=inner._embed_on, args=(None, chunk[:half]))
            other.start()
            inner._embed_on(None, chunk[half:])
            other.join()

    out: dict[str, Any] = {"file": file, "episodes": len(runs), "chunk": CHUNK,
                           "condense_s": _timed(lambda: [condense(t) for t in runs])}
    for name, session in (("spinning", spinning), ("sleeping", sleeping)):
        out[name] = {"raw_embedder": _timed(raw(session)), "condense_then_embed": _timed(in_turn(session)),
                     "overlapped": _timed(overlapped(session))}
    if inner.lanes > 1:
        out["raw_embedder_two_one_thread_lanes"] = _timed(two_lanes)
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
