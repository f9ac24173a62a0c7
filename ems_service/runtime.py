"""Runtime: the composition root. Builds the repositories, embedder, vector backend and services once, bottom-up,
handing each service the collaborators it calls; runs their maintenance loop."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from ems_service.batcher import BatchingEmbedder
from ems_service.catalog import Catalog
from ems_service.coaching import CoachingService
from ems_service.config import Settings
from ems_service.db import check_schema
from ems_service.embeddings import Embedder
from ems_service.experience import ExperienceService
from ems_service.index import build_backend
from ems_service.ingest import IngestService
from ems_service.keys import KeyRing
from ems_service.lessons import LessonService
from ems_service.limits import Limits
from ems_service.llm import build_llm
from ems_service.metrics import Metrics
from ems_service.repositories import (
    Database,
    EpisodeRepository,
    EventRepository,
    FactRepository,
    IndexFeed,
    KeyRepository,
    LessonRepository,
    RiskModelRepository,
    SessionRepository,
)
from ems_service.retrieval import RetrievalService
from ems_service.risk import RiskModels
from ems_service.sessions import SessionService
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

        return load_int8(pinned, batch_size=cfg.batch_size, lanes=cfg.lanes)
    if cfg.backend != "torch" and cfg.model_path is None and cfg.device == "cpu":
        from ems_service.onnx_embedder import FP32, SEL8, load

        graphs = {"onnx_fp32": (FP32,), "onnx_selective_int8": (SEL8,)}.get(cfg.backend, (SEL8, FP32))
        try:
            return load(pinned, settings.data_dir, batch_size=cfg.batch_size, graphs=graphs, lanes=cfg.lanes)
        except Exception as exc:  # fall back to torch, which is always there
            if cfg.backend != "auto":
                raise
            logger.warning("ONNX embedder unavailable (%s); using torch", exc)
    return Embedder(cfg.model_path, batch_size=cfg.batch_size, device=cfg.device)


def _calibration_texts() -> list[str]:
    """16 of the shipped sample of query and episode texts (what the micro-batcher times the model on)."""
    from ems_service.onnx_embedder.graphs import agreement_texts

    texts = agreement_texts()[8:]  # past the probes (one is a 700-character repeat)
    return texts[:: max(1, len(texts) // 16)][:16]


class Runtime:
    """Everything one process needs, built once; `create_app`, the MCP server and the CLI share it. Routes never
    see it: they receive the one service they call (ems_service.routes.deps)."""

    def __init__(self, settings: Settings, *, embedder: Embedder | None = None) -> None:
        self.settings = settings
        # repositories: all SQL
        self.db = Database(settings.database_url)
        check_schema(self.db.engine)
        self.episodes = EpisodeRepository(self.db)
        self.events = EventRepository(self.db)
        single_threaded_numpy_blas()
        cfg = settings.embedder
        model = embedder or build_embedder(settings)
        self.embedder = BatchingEmbedder(model, max_batch=1 if cfg.micro_batch == "off" else cfg.max_batch,
                                         max_wait_s=cfg.batch_wait_ms / 1000, lanes=getattr(model, "lanes", 1),
                                         calibrate=_calibration_texts() if cfg.micro_batch == "auto" else None)
        self.vectors = build_backend(settings, IndexFeed(self.db, self.episodes), model=self.embedder.name,
                                     dimension=self.embedder.dimension)
        self.llm = build_llm(settings.llm)
        self.metrics = Metrics()
        self.metrics.watch(self.vectors)
        self.limits = Limits(settings.limits)
        # services, bottom-up: each receives what it calls
        self.retrieval = RetrievalService(episodes=self.episodes, vectors=self.vectors, embedder=self.embedder,
                                          settings=settings)
        self.risk = RiskModels(settings=settings.coach, models=RiskModelRepository(self.db), episodes=self.episodes,
                               retrieval=self.retrieval)
        self.lessons = LessonService(lessons=LessonRepository(self.db), events=self.events, metrics=self.metrics)
        summarize_fn = self.llm.summarize if self.llm is not None and settings.llm.use_for_summaries else None
        self.ingest = IngestService(episodes=self.episodes, vectors=self.vectors, embedder=self.embedder,
                                    index=settings.index, metrics=self.metrics, exclusive=self.db.exclusive,
                                    flush_touches=self.retrieval.flush_touches, summarize_fn=summarize_fn,
                                    learn_lessons=self.lessons.learn_many, count_new=self.risk.count_new)
        self.catalog = Catalog(episodes=self.episodes, vectors=self.vectors, embedder=self.embedder,
                               index=settings.index)
        self.coaching = CoachingService(settings=settings.coach, retrieval=self.retrieval, risk=self.risk,
                                        metrics=self.metrics, recall_lessons=self.lessons.recall_texts,
                                        llm=self.llm if settings.llm.use_for_guidance else None)
        self.sessions = SessionService(sessions=SessionRepository(self.db), coaching=self.coaching,
                                       ingest=self.ingest, limits=self.limits, settings=settings.coach)
        self.keys = KeyRing(KeyRepository(self.db))
        self.experience = ExperienceService(episodes=self.episodes, facts=FactRepository(self.db), limits=self.limits)
        self._last_prune = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._follower: threading.Thread | None = None
        self.read_only = False
        self.ready = False

    def start(self, *, background: bool = True) -> Runtime:
        """Open every namespace's index (snapshot + catch-up, or rebuild) and start maintenance."""
        self.read_only = self.db.detect_standby()
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

    def maintain(self, *, final: bool = False) -> None:
        """One round of background work: flush retrieval counts, write changed index snapshots (the vector
        backend's maintenance; the last round, at close, only what must be kept: no index builds)."""
        if final:
            self.vectors.close()
        else:
            self.vectors.maintain()
        if self.read_only:
            self.retrieval.drop_touches()  # a standby keeps no retrieval counts
            return
        self.retrieval.flush_touches()
        self.sessions.expire()
        if time.time() - self._last_prune > 86400:
            self._prune()

    def _prune(self) -> None:
        self._last_prune = time.time()
        self.lessons.prune()

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
        self.risk.close()
        self.embedder.close()  # a timing of the model in the background stops between texts
        for thread in (self._thread, self._follower):
            if thread is not None:
                thread.join(timeout=10)
        try:
            self.maintain(final=True)
        except Exception:  # closing must not raise on a dead database
            logger.exception("final maintenance failed")
        if self.llm is not None:
            self.llm.close()
        self.db.close()
