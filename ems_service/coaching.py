"""CoachService: retrieval for the coach, the risk model per namespace (fit, persist, refit), guidance."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import select

from coach import CoachConfig, Guidance, Neighbour, PartialRun, RiskModel, advise, fit, log_loss, run_features
from condenser import is_verified
from ems_service.config import Settings
from ems_service.errors import CannotFit, NotReady
from ems_service.service import MemoryService, SearchHit
from ems_service.store import unpack_trajectory, utcnow
from ems_service.tables import EpisodeRecord, RiskModelRecord

if TYPE_CHECKING:
    from ems_service.lessons import LessonService

logger = logging.getLogger(__name__)

PREFIX_STEPS = (3, 5, 10)


def _fit(samples: list[tuple[dict, int, int]], *, healthy_budget: float) -> RiskModel:
    """coach.fit on (features, failed, id) samples; its ValueError (too few samples of an outcome) as CannotFit."""
    try:
        return fit([f for f, _, _ in samples], [y for _, y, _ in samples], healthy_budget=healthy_budget)
    except ValueError as exc:
        raise CannotFit(str(exc)) from exc


@dataclass
class CoachTimings:
    """Milliseconds spent per stage of one coach call."""

    embed: float = 0.0
    search: float = 0.0
    risk: float = 0.0
    guidance: float = 0.0

    def header(self) -> str:
        return ", ".join(f"{k};dur={v:.2f}" for k, v in self.__dict__.items())


@dataclass
class CoachCounters:
    calls: int = 0
    interventions: int = 0
    llm_calls: int = 0
    llm_fallbacks: int = 0


def to_neighbour(hit: SearchHit) -> Neighbour:
    r = hit.record
    return Neighbour(
        id=r.id, similarity=hit.similarity, success=r.success, domain=r.domain, task=r.task, summary=r.summary,
        trust=r.trust, n_steps=r.n_steps, error_patterns=list(r.error_patterns or []),
        failure_categories=list(r.failure_categories or []), steps_brief=list(r.steps_brief or []),
        agent=r.agent, verified=is_verified(r.label_source, bool(r.verified)),
    )


class CoachService:
    """Coaches partial runs from the namespace's memory; silence is the default."""

    def __init__(self, *, settings: Settings, memory: MemoryService,
                 llm: Callable[[list[dict[str, str]]], str] | None = None) -> None:
        self.settings = settings
        self.memory = memory
        self.store = memory.store
        self.llm = llm if settings.llm.use_for_guidance else None
        self.counters = CoachCounters()
        self._models: dict[str, RiskModel] = {}
        self._new_since_fit: dict[str, int] = {}
        self._fit_lock = threading.Lock()
        self._stopping = threading.Event()
        self._refit_thread: threading.Thread | None = None
        memory.on_ingest.append(self._count_ingest)
        self.lessons: LessonService | None = None  # set by the runtime: tier-2 lessons for runs whose last step failed

    def close(self) -> None:
        """Stop a background refit (it aborts between episodes) and wait for it."""
        self._stopping.set()
        if self._refit_thread is not None:
            self._refit_thread.join(timeout=30)

    @property
    def config(self) -> CoachConfig:
        return self.settings.coach.decision()

    # -- coaching -------------------------------------------------------------------------------------------

    def neighbours(self, *, namespace: str, run: PartialRun, k: int, exclude_task_id: str | None = None,
                   domain: str | None = None, timings: CoachTimings | None = None) -> list[Neighbour]:
        """The k episodes most similar to the run so far (never from the same task_id when asked)."""
        t0 = time.perf_counter()
        vector = self.memory.embed_query(namespace, self.memory.query_text(trajectory=run))
        t1 = time.perf_counter()
        hits = self.memory.search_vector(namespace=namespace, vector=vector, k=k, domain=domain,
                                         exclude_task_id=exclude_task_id, prefer_domain=run.domain,
                                         prefer_task=run.task)
        if timings is not None:
            timings.embed += (t1 - t0) * 1000
            timings.search += (time.perf_counter() - t1) * 1000
        return [to_neighbour(h) for h in hits]

    def coach(self, *, namespace: str, run: PartialRun, k: int | None = None, exclude_task_id: str | None = None,
              domain: str | None = None, recent_advice: list[tuple[int, str]] | None = None,
              lessons: list[str] | None = None) -> tuple[Guidance, CoachTimings]:
        """Guidance for a partial run, with the time spent per stage."""
        timings = CoachTimings()
        neighbours = self.neighbours(namespace=namespace, run=run, k=k or self.settings.coach.k,
                                     exclude_task_id=exclude_task_id, domain=domain, timings=timings)
        if lessons is None and self.lessons is not None and run.steps and run.steps[-1].failed:
            last = run.steps[-1]
            lessons = [r.lesson for r in self.lessons.recall_error(namespace, command=last.action, error=last.error)]
        t0 = time.perf_counter()
        model = self.risk_model(namespace)
        features = run_features(run, neighbours, min_similarity=self.settings.coach.min_similarity)
        t1 = time.perf_counter()
        guidance = advise(run, neighbours, risk_model=model, config=self.config, llm=self.llm,
                          recent_advice=recent_advice, lessons=lessons, features=features)
        t2 = time.perf_counter()
        timings.risk = (t1 - t0) * 1000
        timings.guidance = (t2 - t1) * 1000
        self.counters.calls += 1
        self.counters.interventions += int(guidance.intervene)
        m = self.memory.metrics
        m.coach_calls.labels(namespace).inc()
        m.interventions.labels(namespace).inc(int(guidance.intervene))
        if neighbours:
            m.similarity.observe(max(n.similarity for n in neighbours))
        if self.llm is not None and guidance.intervene:
            self.counters.llm_calls += 1
            self.counters.llm_fallbacks += int(guidance.source.startswith("fallback"))
            m.llm_calls.inc()
            m.llm_fallbacks.inc(int(guidance.source.startswith("fallback")))
        return guidance, timings

    # -- the risk model -------------------------------------------------------------------------------------

    def risk_model(self, namespace: str) -> RiskModel:
        """The fitted model of the namespace when one is stored, else the default weights."""
        model = self._models.get(namespace)
        if model is None:
            with self.store.session() as s:
                row = s.get(RiskModelRecord, namespace)
            model = RiskModel.from_dict(row.model) if row else RiskModel()
            self._models[namespace] = model
        return model

    def fitted_info(self, namespace: str) -> dict | None:
        with self.store.session() as s:
            row = s.get(RiskModelRecord, namespace)
            return None if row is None else {"metrics": row.metrics, "n_episodes": row.n_episodes,
                                             "fitted_at": row.fitted_at.isoformat()}

    def _count_ingest(self, namespace: str, inserted: int) -> None:
        every = self.settings.coach.refit_every
        if every <= 0:
            return
        self._new_since_fit[namespace] = self._new_since_fit.get(namespace, 0) + inserted
        if self._new_since_fit[namespace] >= every and not self._fit_lock.locked():
            self._new_since_fit[namespace] = 0
            self._refit_thread = threading.Thread(target=self._refit_quietly, args=(namespace,), name="ems-refit",
                                                  daemon=True)
            self._refit_thread.start()

    def _refit_quietly(self, namespace: str) -> None:
        try:
            self.calibrate(namespace=namespace)
        except (CannotFit, NotReady) as exc:
            logger.info("risk model refit for %s skipped: %s", namespace, exc.detail)
        except Exception:  # a background refit must never take the service down
            logger.exception("risk model refit for %s failed", namespace)

    def training_samples(self, *, namespace: str, max_episodes: int = 1500,
                         progress: Callable[[int, int], None] | None = None) -> list[tuple[dict, int, int]]:
        """(features, failed, episode id) for prefixes after 3, 5 and 10 steps of labelled episodes.

        Neighbours exclude the episode itself and every run of the same task (no leakage).
        """
        with self.store.session() as s:
            rows = s.execute(
                select(EpisodeRecord.id).where(EpisodeRecord.namespace == namespace,
                                               EpisodeRecord.success.is_not(None)).order_by(EpisodeRecord.id)
            ).scalars().all()
        rows = sorted(rows, key=lambda i: hashlib.sha256(str(i).encode()).hexdigest())[:max_episodes]
        samples: list[tuple[dict, int, int]] = []
        k = self.settings.coach.k
        min_sim = self.settings.coach.min_similarity
        chunk = 64
        for start in range(0, len(rows), chunk):
            if self._stopping.is_set():
                raise NotReady("the service is stopping")
            records = self.store.get_many(namespace, rows[start : start + chunk], full=True)
            runs: list[tuple[PartialRun, EpisodeRecord]] = []
            for episode_id in rows[start : start + chunk]:
                record = records.get(episode_id)
                if record is None:
                    continue
                trajectory = unpack_trajectory(record.trajectory)
                for t in PREFIX_STEPS:
                    if len(trajectory.steps) > t:
                        runs.append((PartialRun(task=trajectory.task, steps=trajectory.steps[:t],
                                                domain=trajectory.domain, start_url=trajectory.start_url,
                                                agent=trajectory.agent), record))
            vectors = self.memory.embedder.embed([self.memory.query_text(trajectory=run) for run, _ in runs])
            for (run, record), vector in zip(runs, vectors, strict=True):
                hits = self.memory.search_vector(namespace=namespace, vector=vector, k=k + 10, touch=False,
                                                 prefer_domain=run.domain, prefer_task=run.task)
                nbs = [to_neighbour(h) for h in hits if h.record.id != record.id and h.record.task != record.task][:k]
                samples.append((run_features(run, nbs, min_similarity=min_sim), int(record.success is False), record.id))
            if progress:
                progress(min(start + chunk, len(rows)), len(rows))
        return samples

    def calibrate(self, *, namespace: str, max_episodes: int = 1500,
                  progress: Callable[[int, int], None] | None = None) -> dict:
        """Fit the risk model on stored episodes, compare it with the defaults on held-out episodes, persist it."""
        with self._fit_lock:
            samples = self.training_samples(namespace=namespace, max_episodes=max_episodes, progress=progress)
            held = [s for s in samples if int(hashlib.sha256(str(s[2]).encode()).hexdigest(), 16) % 5 == 0]
            train = [s for s in samples if s not in held]
            if len({y for _, y, _ in train}) < 2 or len({y for _, y, _ in held}) < 2:
                raise CannotFit("need failed and successful episodes in both the training and held-out sets")
            budget = self.settings.coach.healthy_budget
            fitted = _fit(train, healthy_budget=budget)
            default = RiskModel()
            y_held = [y for _, y, _ in held]
            metrics = {
                "train_samples": len(train), "held_out_samples": len(held),
                "log_loss_fitted": round(log_loss([fitted.score(f)[0] for f, _, _ in held], y_held), 4),
                "log_loss_default": round(log_loss([default.score(f)[0] for f, _, _ in held], y_held), 4),
                "failure_rate": round(sum(y for _, y, _ in samples) / len(samples), 4),
            }
            fitted = _fit(samples, healthy_budget=budget)  # final
            with self.store.session() as s:
                row = s.get(RiskModelRecord, namespace)
                if row is None:
                    row = RiskModelRecord(namespace=namespace)
                    s.add(row)
                row.model, row.metrics = fitted.to_dict(), metrics
                row.n_episodes, row.fitted_at = len({i for _, _, i in samples}), utcnow()
            self._models[namespace] = fitted
        logger.info("risk model fitted for %s: %d samples, held-out log-loss %.4f (default %.4f)", namespace,
                    len(samples), metrics["log_loss_fitted"], metrics["log_loss_default"])
        return metrics
