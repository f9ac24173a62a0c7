"""MemoryService: the use cases of the episodic memory (ingest, search, get, list, delete, evict, stats)."""

from __future__ import annotations

import builtins
import logging
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from coach.rank import pool_size, rank
from condenser import Episode, Trajectory, condense, domain_of, embed_text
from condenser.redact import redact_task_and_actions, redact_text
from ems_service.auth import gate_outcome, may_vouch
from ems_service.batcher import TextEmbedder
from ems_service.config import Settings
from ems_service.errors import EMSError, EpisodeNotFound, Forbidden, ValidationFailed
from ems_service.index.base import IndexRow, Query, VectorBackend
from ems_service.store import EpisodeFilter, Store, utcnow
from ems_service.tables import EpisodeRecord

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IngestResult:
    id: int | None
    deduplicated: bool
    error: EMSError | None = None
    label_downgraded: bool = False


@dataclass(frozen=True)
class SearchHit:
    record: EpisodeRecord
    similarity: float


class MemoryService:
    """Condense -> embed -> commit -> index; the index changes only after the commit succeeded."""

    def __init__(
        self,
        *,
        settings: Settings,
        store: Store,
        embedder: TextEmbedder,
        vectors: VectorBackend,
        summarize_fn: Callable[[str], str] | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.vectors = vectors
        self.summarize_fn = summarize_fn
        self._evict_lock = threading.Lock()
        self._touch_lock = threading.Lock()
        self._query_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._query_lock = threading.Lock()
        self._touches: dict[str, Counter[int]] = {}
        self.on_ingest: list[Callable[[str, int], None]] = []
        self.on_new_episodes: list[Callable[[str, list[Episode]], None]] = []
        from ems_service.metrics import Metrics

        self.metrics = Metrics()  # the runtime hands in the process-wide one

    # -- ingest ---------------------------------------------------------------------------------------------

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
        existing = self.store.find_by_hashes(namespace, [ep.trajectory_hash for _, ep in episodes]) if episodes else {}
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
            ids = self._insert([ep for _, ep in new], vectors, namespace)
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
        self.store.bump_seen(namespace, dup_ids)
        inserted = len(fresh)  # refused rows were dropped from `fresh`
        self.metrics.ingested.labels(namespace).inc(inserted)
        self.metrics.deduplicated.labels(namespace).inc(len(dup_ids))
        logger.info("ingest %s: %d inserted, %d deduplicated, %d rejected", namespace, inserted, len(dup_ids),
                    sum(1 for r in results if r and r.error))
        if inserted:
            for hook in self.on_new_episodes:
                hook(namespace, [ep for _, ep in fresh.values()])
            self.evict_if_needed(namespace)
            for counter in self.on_ingest:
                counter(namespace, inserted)
        return [r for r in results if r is not None]

    def _insert(self, episodes: list[Episode], vectors: np.ndarray, namespace: str) -> list[int | EMSError]:
        """Ids in order; one multi-row INSERT, or (when a row is refused) one insert per episode, so a refusal
        becomes that item's error (ValidationFailed) on both databases instead of failing the whole batch."""
        from sqlalchemy.exc import IntegrityError

        try:
            return list(self.store.insert_episodes(episodes, vectors, self.embedder.name))
        except (IntegrityError, ValidationFailed):
            # A concurrent writer stored one of these hashes first (keep its id), or the database refused a value
            ids: list[int | EMSError] = []
            for ep, vec in zip(episodes, vectors, strict=True):
                try:
                    ids.extend(self.store.insert_episodes([ep], vec[None, :], self.embedder.name))
                except IntegrityError:
                    ids.append(self.store.find_by_hashes(namespace, [ep.trajectory_hash])[ep.trajectory_hash])
                except ValidationFailed as exc:
                    ids.append(exc)
            return ids

    # -- eviction -------------------------------------------------------------------------------------------

    def evict_if_needed(self, namespace: str) -> list[int]:
        """Evict a batch (EMS_INDEX__EVICT_FRACTION of capacity) when the namespace is over capacity."""
        cfg = self.settings.index
        if self.vectors.count(namespace) <= cfg.capacity:
            # the backend's count trails the table by at most a follow interval: no COUNT(*) per ingest while the
            # namespace is under capacity (3 ms at 100k rows on SQLite, more than a one-run insert)
            return []
        with self._evict_lock, self.store.exclusive(f"evict:{namespace}") as mine:
            count = self.store.count(namespace)
            if count <= cfg.capacity or not mine:  # another replica is evicting this namespace right now
                return []
            n = min(count, max(count - cfg.capacity, math.ceil(cfg.capacity * cfg.evict_fraction)))
            self.flush_touches()
            victims = self.store.eviction_candidates(namespace, n, cfg.eviction_policy)
            deleted = self.store.delete(namespace, victims, reason=f"evict:{cfg.eviction_policy}")
            self.vectors.remove(namespace, deleted)
        self.metrics.evicted.labels(namespace).inc(len(deleted))
        logger.info("eviction %s: %d episodes evicted (%s), %d remain", namespace, len(deleted),
                    cfg.eviction_policy, count - len(deleted))
        return deleted

    # -- read -----------------------------------------------------------------------------------------------

    def get(self, *, namespace: str, episode_id: int) -> EpisodeRecord:
        record = self.store.get(namespace, episode_id)
        if record is None:
            raise EpisodeNotFound(f"episode {episode_id} does not exist in this namespace")
        return record

    def list(self, *, namespace: str, flt: EpisodeFilter, cursor: int | None, limit: int) -> list[EpisodeRecord]:
        return self.store.list(namespace, flt, after_id=cursor, limit=limit)

    def delete(self, *, namespace: str, episode_id: int) -> None:
        deleted = self.store.delete(namespace, [episode_id], reason="api")
        if not deleted:
            raise EpisodeNotFound(f"episode {episode_id} does not exist in this namespace")
        self.vectors.remove(namespace, deleted)

    def relabel(self, *, namespace: str, episode_id: int, success: bool | None, label_source: str,
                verified: bool = False, role: str = "admin") -> tuple[EpisodeRecord, bool]:
        """A later verdict (e.g. a judge contradicting a self-report): relabel, record, re-index the label.

        Returns the row and whether a writer's verified claim was stored as an unverified self-report. A writer
        may not overwrite a verified label (403): only a verifier or admin may contradict one.
        """
        from condenser import Outcome, is_verified, trust_of

        current = self.get(namespace=namespace, episode_id=episode_id)
        if not may_vouch(role) and is_verified(current.label_source, current.verified):
            raise Forbidden(f"episode {episode_id} carries a verified label: only a verifier or admin key may "
                            "change it")
        outcome, downgraded = gate_outcome(Outcome(success=success, label_source=label_source, verified=verified),
                                           role=role)
        done = self.store.relabel(namespace, episode_id, success=outcome.success, label_source=outcome.label_source,
                                  verified=is_verified(outcome.label_source, outcome.verified),
                                  trust=trust_of(outcome.label_source, current.source))
        if done is None:
            raise EpisodeNotFound(f"episode {episode_id} does not exist in this namespace")
        row, _ = done
        vector = np.frombuffer(row.embedding, dtype=np.float32, count=row.embedding_dim)
        self.vectors.add(namespace, [IndexRow(row.id, vector, row.domain, row.success, row.task_id)])
        return row, downgraded

    def query_text(self, *, text: str | None = None, trajectory: Trajectory | None = None) -> str:
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
        with self._query_lock:
            vector = self._query_cache.get(key)
            if vector is not None:
                self._query_cache.move_to_end(key)
                return vector
        vector = self.embedder.embed([text])[0]
        vector.flags.writeable = False
        if size := self.settings.embedder.query_cache:
            with self._query_lock:
                self._query_cache[key] = vector
                while len(self._query_cache) > size:
                    self._query_cache.popitem(last=False)
        return vector

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
    ) -> builtins.list[SearchHit]:
        """Nearest stored episodes of `vector`, filtered, with their rows.

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
            light = self.store.tasks(namespace, [h.id for h in hits])
            hits = rank(prefer_task, prefer_domain if dom is None else None, [h for h in hits if h.id in light],
                        key=lambda h: (h.score, *light[h.id]), domain_boost=boost)[:k]
        records = self.store.get_many(namespace, [h.id for h in hits])
        out = [SearchHit(records[h.id], h.score) for h in hits if h.id in records]
        if touch and out:
            with self._touch_lock:
                self._touches.setdefault(namespace, Counter()).update(h.record.id for h in out)
        return out

    def search(self, *, namespace: str, text: str | None = None, trajectory: Trajectory | None = None,
               k: int = 5, **filters: object) -> builtins.list[SearchHit]:
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
            self.store.touch(ns, dict(hits), now)

    def stats(self, *, namespace: str) -> dict:
        stats = self.store.stats(namespace)
        described = self.vectors.describe(namespace)
        stats.update(
            {
                "namespace": namespace,
                "vector_backend": self.vectors.name,
                "index_size": described["index_size"],
                "index_type": described["index_type"],
                "index_bytes": described["index_bytes"],
                "capacity": self.settings.index.capacity,
                "eviction_policy": self.settings.index.eviction_policy,
                "embedding_model": self.embedder.name,
                "dimension": self.embedder.dimension,
            }
        )
        return stats
