"""Retrieval: the query text and its embedding (a small LRU cache), nearest-episode search, retrieval counts."""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass

import numpy as np

from coach.rank import pool_size, rank
from condenser import Trajectory, domain_of, embed_text
from condenser.redact import redact_task_and_actions, redact_text
from ems_service.batcher import TextEmbedder
from ems_service.config import Settings
from ems_service.index.base import Query, VectorBackend
from ems_service.repositories import EpisodeRepository, StoredEpisode, utcnow


@dataclass(frozen=True)
class SearchHit:
    episode: StoredEpisode
    similarity: float


class RetrievalService:
    """Finds the stored episodes nearest a text or a (partial) run; counts retrievals for LRU eviction."""

    def __init__(self, *, episodes: EpisodeRepository, vectors: VectorBackend, embedder: TextEmbedder,
                 settings: Settings) -> None:
        self.episodes = episodes
        self.vectors = vectors
        self.embedder = embedder
        self.settings = settings  # EMS_EMBEDDER__QUERY_CACHE and EMS_COACH__DOMAIN_BOOST, read when used
        self._cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._touches: dict[str, Counter[int]] = {}
        self._touch_lock = threading.Lock()

    @staticmethod
    def query_text(*, text: str | None = None, trajectory: Trajectory | None = None) -> str:
        """The text embedded for a search: given text, or a (partial) run rendered like an episode; redacted
        like a stored episode, so a secret in a query never reaches the embedder either."""
        if trajectory is not None:
            task, actions = redact_task_and_actions(trajectory)
            domain = trajectory.domain and redact_text(trajectory.domain)  # a client-given domain is free text
            return embed_text(task, domain, actions)
        return redact_text(text or "")

    def embed_query(self, namespace: str, text: str) -> np.ndarray:
        """The (read-only) vector of a query text, from a small LRU cache when it was asked for lately: a
        session's query stops changing once its run has MAX_EMBED_ACTIONS distinct actions, and agents retry.
        Keyed by namespace too, so one tenant's latency never tells whether another asked the same."""
        key = (namespace, text)
        with self._cache_lock:
            vector = self._cache.get(key)
            if vector is not None:
                self._cache.move_to_end(key)
                return vector
        vector = self.embedder.embed([text])[0]
        vector.flags.writeable = False
        if size := self.settings.embedder.query_cache:
            with self._cache_lock:
                self._cache[key] = vector
                while len(self._cache) > size:
                    self._cache.popitem(last=False)
        return vector

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Vectors of many query texts at once, uncached (a calibration's prefixes)."""
        return self.embedder.embed(texts)

    def search_vector(
        self,
        *,
        namespace: str,
        vector: np.ndarray,
        k: int,
        domain: str | None = None,
        success: bool | None = None,
        exclude_task_id: str | None = None,
        min_similarity: float | None = None,
        touch: bool = True,
        prefer_domain: str | None = None,
        prefer_task: str | None = None,
    ) -> list[SearchHit]:
        """Nearest stored episodes of `vector`, filtered, with their stored fields.

        `prefer_domain` ranks that site's episodes up by EMS_COACH__DOMAIN_BOOST, and `prefer_task` ranks runs
        of the same task template above those (coach.rank, over a wider pool): the coach's retrieval.
        """
        dom = domain_of(domain) or domain.lower() if domain else None
        boost = self.settings.coach.domain_boost
        wanted = pool_size(k) if prefer_task else k
        hits = self.vectors.search(namespace, Query(vector, wanted, domain=dom, success=success,
                                                    exclude_task_id=exclude_task_id, prefer_domain=prefer_domain,
                                                    boost=boost))
        if min_similarity is not None:
            hits = [h for h in hits if h.score >= min_similarity]
        if prefer_task:  # rank the pool on (task, domain) alone, then load only the top k rows, in that order
            light = self.episodes.tasks(namespace, [h.id for h in hits])
            hits = rank(prefer_task, prefer_domain if dom is None else None, [h for h in hits if h.id in light],
                        key=lambda h: (h.score, *light[h.id]), domain_boost=boost)[:k]
        found = self.episodes.summaries(namespace, [h.id for h in hits])
        out = [SearchHit(found[h.id], h.score) for h in hits if h.id in found]
        if touch and out:
            with self._touch_lock:
                self._touches.setdefault(namespace, Counter()).update(h.episode.id for h in out)
        return out

    def search(self, *, namespace: str, text: str | None = None, trajectory: Trajectory | None = None,
               k: int = 5, **filters: object) -> list[SearchHit]:
        """Embed the query and search (see search_vector)."""
        vector = self.embed_query(namespace, self.query_text(text=text, trajectory=trajectory))
        if trajectory is not None and not filters.get("domain"):  # a run is ranked as the coach ranks its evidence
            filters = {"prefer_domain": trajectory.domain, "prefer_task": trajectory.task, **filters}
        return self.search_vector(namespace=namespace, vector=vector, k=k, **filters)  # type: ignore[arg-type]  # search_vector's keyword filters

    def drop_touches(self) -> None:
        """Forget buffered retrieval counts (a read-only replica cannot write them)."""
        with self._touch_lock:
            self._touches = {}

    def flush_touches(self) -> None:
        """Write buffered retrieval counts (kept off the request path)."""
        with self._touch_lock:
            pending, self._touches = self._touches, {}
        now = utcnow()
        for ns, hits in pending.items():
            self.episodes.touch(ns, dict(hits), now)
