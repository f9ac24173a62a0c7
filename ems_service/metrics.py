"""Prometheus metrics (prometheus-client's home module), one registry per process/app."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from ems_service.admission import FifoGate
    from ems_service.index.base import VectorBackend

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """Counters and histograms the services update; gauges are read from the vector backend at scrape time."""

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.latency = Histogram("ems_request_seconds", "Request latency by route", ["method", "route", "status"],
                                 registry=r, buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10))
        self.ingested = Counter("ems_episodes_ingested", "Episodes stored", ["namespace"], registry=r)
        self.deduplicated = Counter("ems_episodes_deduplicated", "Repeat posts of stored episodes", ["namespace"],
                                    registry=r)
        self.evicted = Counter("ems_episodes_evicted", "Episodes evicted", ["namespace"], registry=r)
        self.coach_calls = Counter("ems_coach_calls", "Coach calls", ["namespace"], registry=r)
        self.interventions = Counter("ems_coach_interventions", "Coach calls that intervened", ["namespace"],
                                     registry=r)
        self.similarity = Histogram("ems_evidence_similarity", "Similarity of the best evidence per coach call",
                                    registry=r, buckets=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0))
        self.llm_calls = Counter("ems_llm_calls", "LLM calls", registry=r)
        self.llm_fallbacks = Counter("ems_llm_fallbacks", "LLM replies replaced by the evidence-built guidance",
                                     registry=r)
        self.lesson_recalls = Counter("ems_lesson_recalls", "Lesson recalls", ["kind"], registry=r)
        self._gauges: Collector | None = None

    def watch(self, vectors: VectorBackend) -> None:
        """Expose gauges read at scrape time: episodes and vector backend per namespace, silence rate."""
        metrics = self

        class _Gauges:
            def collect(self) -> Iterator[GaugeMetricFamily]:
                sizes = vectors.sizes()
                episodes = GaugeMetricFamily("ems_episodes", "Episodes in the index", labels=["namespace"])
                kind = GaugeMetricFamily("ems_index_info", "Vector backend per namespace",
                                         labels=["namespace", "backend"])
                for ns, n in sorted(sizes.items()):
                    episodes.add_metric([ns], n)
                    kind.add_metric([ns, vectors.name], 1)
                yield episodes
                yield kind
                calls = sum(s.value for m in metrics.coach_calls.collect() for s in m.samples if s.name.endswith("_total"))
                hits = sum(s.value for m in metrics.interventions.collect() for s in m.samples if s.name.endswith("_total"))
                silence = GaugeMetricFamily("ems_coach_silence_rate", "Share of coach calls that stayed silent")
                silence.add_metric([], (1 - hits / calls) if calls else 1.0)
                yield silence

        self._gauges = _Gauges()
        self.registry.register(self._gauges)

    def watch_admission(self, gate: FifoGate) -> None:
        """Expose the admission gate's state at scrape time: requests inside the service and waiting their turn."""

        class _Admission:
            def collect(self) -> Iterator[GaugeMetricFamily]:
                yield GaugeMetricFamily("ems_requests_in_flight", "API requests inside the service "
                                        "(at most EMS_MAX_IN_FLIGHT)", value=gate.inside)
                yield GaugeMetricFamily("ems_requests_waiting", "API requests waiting for their turn",
                                        value=gate.waiting)

        self.registry.register(_Admission())

    def render(self) -> bytes:
        return generate_latest(self.registry)
