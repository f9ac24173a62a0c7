"""Ingest: condense -> embed -> commit -> index, dedup, eviction over capacity, deletes and relabels.

The index changes only after the commit succeeded. What follows an ingest elsewhere (lessons learned from the runs,
the risk model's refit count) is handed in as callables by the composition root, never registered afterwards."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from condenser import Episode, Outcome, Trajectory, condense, is_verified, trust_of
from ems_service.auth import gate_outcome, may_vouch
from ems_service.batcher import TextEmbedder
from ems_service.config import IndexSettings
from ems_service.errors import EMSError, EpisodeNotFound, Forbidden
from ems_service.index.base import IndexRow, VectorBackend
from ems_service.metrics import Metrics
from ems_service.repositories import EpisodeRepository, StoredEpisode

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IngestResult:
    id: int | None
    deduplicated: bool
    error: EMSError | None = None
    label_downgraded: bool = False


class IngestService:
    """Writes episodes: rows first, then vectors; evicts a batch when a namespace passes its capacity."""

    def __init__(
        self,
        *,
        episodes: EpisodeRepository,
        vectors: VectorBackend,
        embedder: TextEmbedder,
        index: IndexSettings,
        metrics: Metrics,
        exclusive: Callable[[str], AbstractContextManager[bool]],
        flush_touches: Callable[[], None],
        summarize_fn: Callable[[str], str] | None = None,
        learn_lessons: Callable[[str, list[Trajectory]], object] | None = None,
        count_new: Callable[[str, int], None] | None = None,
    ) -> None:
        self.episodes = episodes
        self.vectors = vectors
        self.embedder = embedder
        self.index = index
        self.metrics = metrics
        self.exclusive = exclusive  # a cluster-wide try-lock: one replica evicts a namespace at a time
        self.flush_touches = flush_touches  # retrieval counts written before LRU picks its victims
        self.summarize_fn = summarize_fn
        self.learn_lessons = learn_lessons
        self.count_new = count_new
        self._evict_lock = threading.Lock()

    def ingest(self, *, namespace: str, trajectories: list[Trajectory], role: str = "admin") -> list[IngestResult]:
        """Store finished runs (deduplicated), then index them and evict over capacity; one result per run, in
        order, each with its own error (a run the database refuses fails alone). The runs are within the limits:
        the edge checked them (ems_service.limits).

        A verified claim from a role that may not vouch (a writer) is stored as an unverified self-report.

        Condense every run, drop those already stored (or repeated in the batch), embed the new ones in one
        call (the embedder groups them by length), insert them in one transaction, then index them. (Embedding
        one chunk while condensing the next measured no faster on 2 cores: both compete for the CPU and the GIL.)
        """
        results: list[IngestResult | None] = [None] * len(trajectories)
        episodes: list[tuple[int, Episode]] = []
        downgraded = [False] * len(trajectories)
        for i, trajectory in enumerate(trajectories):
            outcome, downgraded[i] = gate_outcome(trajectory.outcome, role=role)
            if downgraded[i]:
                trajectory = trajectory.model_copy(update={"outcome": outcome})
            episodes.append((i, condense(trajectory, namespace=namespace, summarize_fn=self.summarize_fn)))
        existing = self.episodes.find_by_hashes(namespace, [ep.trajectory_hash for _, ep in episodes]) if episodes else {}
        if existing and may_vouch(role):
            self._replace_unverified(namespace, episodes, existing)
        fresh: dict[str, tuple[list[int], Episode]] = {}
        dup_ids: list[int] = []
        for i, ep in episodes:
            if ep.trajectory_hash in existing:
                results[i] = IngestResult(existing[ep.trajectory_hash], True, label_downgraded=downgraded[i])
                dup_ids.append(existing[ep.trajectory_hash])
            elif ep.trajectory_hash in fresh:
                fresh[ep.trajectory_hash][0].append(i)
            else:
                fresh[ep.trajectory_hash] = ([i], ep)
        if fresh:
            new = list(fresh.values())
            vectors = self.embedder.embed([ep.embed_text for _, ep in new])
            ids = self.episodes.insert_each(namespace, [ep for _, ep in new], vectors, self.embedder.name)
            rows = []
            for (positions, ep), new_id, vec in zip(new, ids, vectors, strict=True):
                if isinstance(new_id, EMSError):
                    for pos in positions:
                        results[pos] = IngestResult(None, False, new_id)
                    fresh.pop(ep.trajectory_hash)
                    continue
                results[positions[0]] = IngestResult(new_id, False, label_downgraded=downgraded[positions[0]])
                for extra in positions[1:]:
                    results[extra] = IngestResult(new_id, True, label_downgraded=downgraded[extra])
                    dup_ids.append(new_id)
                rows.append(IndexRow(new_id, vec, ep.domain, ep.success, ep.task_id))
            if rows:
                self.vectors.add(namespace, rows)
        self.episodes.bump_seen(namespace, dup_ids)
        inserted = len(fresh)  # refused rows were dropped from `fresh`
        self.metrics.ingested.labels(namespace).inc(inserted)
        self.metrics.deduplicated.labels(namespace).inc(len(dup_ids))
        logger.info("ingest %s: %d inserted, %d deduplicated, %d rejected", namespace, inserted, len(dup_ids),
                    sum(1 for r in results if r and r.error))
        if inserted:
            self._learn(namespace, [ep.trajectory for _, ep in fresh.values()])
            self.evict_if_needed(namespace)
            if self.count_new is not None:
                self.count_new(namespace, inserted)
        return [r for r in results if r is not None]

    def _replace_unverified(self, namespace: str, episodes: list[tuple[int, Episode]], existing: dict[str, int]) -> None:
        """A vouched run whose hash an unverified row holds replaces that row (taken out of `existing`): the hash
        covers the task, the actions and the outcome, not the addresses or the notes, so a writer's copy posted first
        would otherwise keep its own and swallow the verifier's label (a red team's laundering)."""
        stale = []
        for _, ep in episodes:
            held = existing.get(ep.trajectory_hash)
            if held is None or not is_verified(ep.label_source, ep.verified):
                continue
            stored = self.episodes.get(namespace, held)
            if stored is not None and not is_verified(stored.label_source, stored.verified):
                stale.append(existing.pop(ep.trajectory_hash))
        if stale:
            self.vectors.remove(namespace, self.episodes.delete(namespace, stale, reason="replaced_by_verified"))

    def _learn(self, namespace: str, trajectories: list[Trajectory]) -> None:
        if self.learn_lessons is None:
            return
        try:
            self.learn_lessons(namespace, trajectories)
        except Exception:  # lessons are derived data; never fail an acknowledged ingest
            logger.exception("lesson extraction failed for an ingest batch of %d episodes", len(trajectories))

    def evict_if_needed(self, namespace: str) -> list[int]:
        """Evict a batch (EMS_INDEX__EVICT_FRACTION of capacity) when the namespace is over capacity."""
        cfg = self.index
        if self.vectors.count(namespace) <= cfg.capacity:
            # the backend's count trails the table by at most a follow interval: no COUNT(*) per ingest while the
            # namespace is under capacity (3 ms at 100k rows on SQLite, more than a one-run insert)
            return []
        with self._evict_lock, self.exclusive(f"evict:{namespace}") as mine:
            count = self.episodes.count(namespace)
            if count <= cfg.capacity or not mine:  # another replica is evicting this namespace right now
                return []
            n = min(count, max(count - cfg.capacity, math.ceil(cfg.capacity * cfg.evict_fraction)))
            self.flush_touches()
            victims = self.episodes.eviction_candidates(namespace, n, cfg.eviction_policy)
            deleted = self.episodes.delete(namespace, victims, reason=f"evict:{cfg.eviction_policy}")
            self.vectors.remove(namespace, deleted)
        self.metrics.evicted.labels(namespace).inc(len(deleted))
        logger.info("eviction %s: %d episodes evicted (%s), %d remain", namespace, len(deleted),
                    cfg.eviction_policy, count - len(deleted))
        return deleted

    def delete(self, *, namespace: str, episode_id: int, role: str = "admin") -> None:
        """Delete an episode's row (logged for the indexes), then its vector. A writer may not delete a verified
        episode (403), as it may not relabel one: that would clear the way for its own runs' plans."""
        if not may_vouch(role):
            current = self.episodes.get(namespace, episode_id)
            if current is not None and is_verified(current.label_source, current.verified):
                raise Forbidden(f"episode {episode_id} carries a verified label: only a verifier or admin key may "
                                "delete it")
        deleted = self.episodes.delete(namespace, [episode_id], reason="api")
        if not deleted:
            raise EpisodeNotFound(f"episode {episode_id} does not exist in this namespace")
        self.vectors.remove(namespace, deleted)

    def relabel(self, *, namespace: str, episode_id: int, success: bool | None, label_source: str,
                verified: bool = False, role: str = "admin") -> tuple[StoredEpisode, bool]:
        """A later verdict (e.g. a judge contradicting a self-report): relabel, record, re-index the label.

        Returns the episode and whether a writer's verified claim was stored as an unverified self-report. A
        writer may not overwrite a verified label (403): only a verifier or admin may contradict one.
        """
        current = self.episodes.get(namespace, episode_id)
        if current is None:
            raise EpisodeNotFound(f"episode {episode_id} does not exist in this namespace")
        if not may_vouch(role) and is_verified(current.label_source, current.verified):
            raise Forbidden(f"episode {episode_id} carries a verified label: only a verifier or admin key may "
                            "change it")
        outcome, downgraded = gate_outcome(Outcome(success=success, label_source=label_source, verified=verified),
                                           role=role)
        done = self.episodes.relabel(namespace, episode_id, success=outcome.success,
                                     label_source=outcome.label_source,
                                     verified=is_verified(outcome.label_source, outcome.verified),
                                     trust=trust_of(outcome.label_source, current.source))
        if done is None:
            raise EpisodeNotFound(f"episode {episode_id} does not exist in this namespace")
        episode, row = done
        self.vectors.add(namespace, [row])
        return episode, downgraded

