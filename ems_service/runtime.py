"""Runtime: builds the store, embedder, indexes and services once, and runs their maintenance loop."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from ems_service.batcher import BatchingEmbedder
from ems_service.coaching import CoachService
from ems_service.config import Settings
from ems_service.db import check_schema
from ems_service.embeddings import Embedder
from ems_service.experience import ExperienceService
from ems_service.index import build_backend
from ems_service.keys import KeyRing
from ems_service.lessons import LessonService
from ems_service.limits import Limits
from ems_service.llm import build_llm
from ems_service.service import MemoryService
from ems_service.sessions import SessionService
from ems_service.store import Store
from ems_service.threads import single_threaded_numpy_blas

logger = logging.getLogger(__name__)


def build_embedder(settings: Settings):  # noqa: ANN201 - Embedder or OnnxEmbedder (same interface)
    """The configured embedder. `auto`: the fastest ONNX graph that agrees with torch (min cosine >= 0.99:
    selective int8, else fp32), else sentence-transformers; `onnx`: the same without the fallback; `onnx_fp32` /
    `onnx_selective_int8`: that graph; `onnx_int8`: the fully quantized graph (opt-in, slightly different vectors)."""
    cfg = settings.embedder
    pinned = Path(cfg.onnx_path) if cfg.onnx_path else None
    if cfg.backend == "onnx_int8":
        from ems_service.onnx_embedder import load_int8

        return load_int8(pinned, batch_size=cfg.batch_size)
    if cfg.backend != "torch" and cfg.model_path is None and cfg.device == "cpu":
        from ems_service.onnx_embedder import FP32, SEL8, load

        graphs = {"onnx_fp32": (FP32,), "onnx_selective_int8": (SEL8,)}.get(cfg.backend, (SEL8, FP32))
        try:
            return load(pinned, settings.data_dir, batch_size=cfg.batch_size, graphs=graphs)
        except Exception as exc:  # fall back to torch, which is always there
            if cfg.backend != "auto":
                raise
            logger.warning("ONNX embedder unavailable (%s); using torch", exc)
    return Embedder(cfg.model_path, batch_size=cfg.batch_size, device=cfg.device)


class Runtime:
    """Everything one process needs; `create_app` and the CLI share it."""

    def __init__(self, settings: Settings, *, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.store = Store(settings.database_url)
        check_schema(self.store.engine)
        single_threaded_numpy_blas()
        cfg = settings.embedder
        self.embedder = BatchingEmbedder(embedder or build_embedder(settings), max_batch=cfg.max_batch,
                                         max_wait_s=cfg.batch_wait_ms / 1000)
        self.vectors = build_backend(settings, self.store, model=self.embedder.name,
                                     dimension=self.embedder.dimension)
        self.llm = build_llm(settings.llm)
        summarize_fn = self.llm.summarize if self.llm is not None and settings.llm.use_for_summaries else None
        self.memory = MemoryService(settings=settings, store=self.store, embedder=self.embedder, vectors=self.vectors,
                                    summarize_fn=summarize_fn)
        self.limits = Limits(settings.limits)
        self.coach = CoachService(settings=settings, memory=self.memory, llm=self.llm)
        self.sessions = SessionService(memory=self.memory, coach=self.coach, limits=self.limits)
        self.metrics = self.memory.metrics
        self.metrics.watch(self)
        self.lessons = LessonService(self.store, self.metrics)
        self.keys = KeyRing(self.store)
        self.experience = ExperienceService(self.store, limits=self.limits)
        self.coach.lessons = self.lessons
        self.memory.on_new_episodes.append(self._learn_lessons)
        self._last_prune = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._follower: threading.Thread | None = None
        self.read_only = False
        self.ready = False

    def start(self, *, background: bool = True) -> Runtime:
        """Open every namespace's index (snapshot + catch-up, or rebuild) and start maintenance."""
        self.read_only = self.store.detect_standby()
        self.vectors.start()
        self.keys.refresh()
        if self.read_only:
            logger.info("the database is a standby: this replica serves reads; writes are answered 405")
        else:
            self.lessons.ensure_seeds("default")
            self._prune()
            if self.settings.admin_key is not None:
                self.keys.ensure(self.settings.admin_key.get_secret_value(), namespace="default", role="admin")
        if background:
            self._thread = threading.Thread(target=self._loop, name="ems-maintenance", daemon=True)
            self._thread.start()
            self._follower = threading.Thread(target=self._follow_loop, name="ems-follower", daemon=True)
            self._follower.start()
        self.ready = True
        return self

    def maintain(self) -> None:
        """One round of background work: flush retrieval counts, write changed index snapshots."""
        self.vectors.maintain()
        if self.read_only:
            self.memory.drop_touches()  # a standby keeps no retrieval counts
            return
        self.memory.flush_touches()
        self.sessions.expire()
        if time.time() - self._last_prune > 86400:
            self._prune()

    def _prune(self) -> None:
        self._last_prune = time.time()
        self.lessons.prune()

    def _learn_lessons(self, namespace: str, episodes: list) -> None:  # condenser Episodes
        try:
            self.lessons.learn_many(namespace, [episode.trajectory for episode in episodes])
        except Exception:  # lessons are derived data; never fail an acknowledged ingest
            logger.exception("lesson extraction failed for an ingest batch of %d episodes", len(episodes))

    def _follow_loop(self) -> None:
        while not self._stop.wait(self.settings.replica.follow_every_s):
            try:
                self.keys.refresh()  # keys made or revoked by other processes (never on the request path)
            except Exception:  # following must survive a passing database outage
                logger.exception("key table refresh failed")
            try:
                self.vectors.follow(lookback=self.settings.replica.lookback)
            except Exception:  # following must survive a passing database outage
                logger.exception("index follow round failed")

    def _loop(self) -> None:
        while not self._stop.wait(self.settings.index.snapshot_every_s):
            try:
                self.maintain()
            except Exception:  # maintenance must survive a passing database outage
                logger.exception("maintenance round failed")

    def close(self) -> None:
        """Stop maintenance, flush and snapshot, release the database."""
        self.ready = False
        self._stop.set()
        self.coach.close()
        for thread in (self._thread, self._follower):
            if thread is not None:
                thread.join(timeout=10)
        try:
            self.maintain()
        except Exception:  # closing must not raise on a dead database
            logger.exception("final maintenance failed")
        if self.llm is not None:
            self.llm.close()
        self.store.close()
