"""CoachingService: guidance for a partial run from the namespace's memory (retrieval, risk, lessons, advice).

The pure `coach` package decides; this service gathers its evidence and counts its calls."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from coach import CoachConfig, Guidance, Neighbour, PartialRun, advise, run_features
from ems_service.config import CoachSettings
from ems_service.metrics import Metrics
from ems_service.retrieval import RetrievalService
from ems_service.risk import RiskModels, to_neighbour

# (namespace, failed command, its error, the run's site) -> the text of approved lessons for it (tier-2 recall)
RecallLessons = Callable[[str, str, str | None, str | None], list[str]]


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


class CoachingService:
    """Coaches partial runs from the namespace's memory; silence is the default."""

    def __init__(self, *, settings: CoachSettings, retrieval: RetrievalService, risk: RiskModels, metrics: Metrics,
                 recall_lessons: RecallLessons | None = None,
                 llm: Callable[[list[dict[str, str]]], str] | None = None) -> None:
        self.settings = settings
        self.retrieval = retrieval
        self.risk = risk
        self.metrics = metrics
        self.recall_lessons = recall_lessons  # lessons for runs whose last step failed
        self.llm = llm
        self.counters = CoachCounters()

    @property
    def config(self) -> CoachConfig:
        return self.settings.decision()

    def neighbours(self, *, namespace: str, run: PartialRun, k: int, exclude_task_id: str | None = None,
                   domain: str | None = None, timings: CoachTimings | None = None) -> list[Neighbour]:
        """The k episodes most similar to the run so far (never from the same task_id when asked)."""
        t0 = time.perf_counter()
        vector = self.retrieval.embed_query(namespace, self.retrieval.query_text(trajectory=run))
        t1 = time.perf_counter()
        hits = self.retrieval.search_vector(namespace=namespace, vector=vector, k=k, domain=domain,
                                            exclude_task_id=exclude_task_id, prefer_domain=run.domain,
                                            prefer_task=run.task)
        if timings is not None:
            timings.embed += (t1 - t0) * 1000
            timings.search += (time.perf_counter() - t1) * 1000
        return [to_neighbour(h) for h in hits]

    def guide(self, *, namespace: str, run: PartialRun, k: int | None = None, exclude_task_id: str | None = None,
              domain: str | None = None, recent_advice: list[tuple[int, str]] | None = None,
              lessons: list[str] | None = None) -> tuple[Guidance, CoachTimings]:
        """Guidance for a partial run, with the time spent per stage."""
        timings = CoachTimings()
        neighbours = self.neighbours(namespace=namespace, run=run, k=k or self.settings.k,
                                     exclude_task_id=exclude_task_id, domain=domain, timings=timings)
        if lessons is None and self.recall_lessons is not None and run.steps and run.steps[-1].failed:
            last = run.steps[-1]
            lessons = self.recall_lessons(namespace, last.action, last.error, run.domain)
        t0 = time.perf_counter()
        model = self.risk.model(namespace)
        features = run_features(run, neighbours, min_similarity=self.settings.min_similarity)
        t1 = time.perf_counter()
        guidance = advise(run, neighbours, risk_model=model, config=self.config, llm=self.llm,
                          recent_advice=recent_advice, lessons=lessons, features=features)
        t2 = time.perf_counter()
        timings.risk = (t1 - t0) * 1000
        timings.guidance = (t2 - t1) * 1000
        self.counters.calls += 1
        self.counters.interventions += int(guidance.intervene)
        m = self.metrics
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
