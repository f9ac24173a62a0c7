"""The catalog: stored episodes as people read them (one, a page, the stored run) and a namespace's counts."""

from __future__ import annotations

from condenser import Trajectory
from ems_service.batcher import TextEmbedder
from ems_service.config import IndexSettings
from ems_service.errors import EpisodeNotFound
from ems_service.index.base import VectorBackend
from ems_service.repositories import EpisodeFilter, EpisodeRepository, StoredEpisode


class Catalog:
    """Reads of stored episodes; a missing one is EpisodeNotFound (404)."""

    def __init__(self, *, episodes: EpisodeRepository, vectors: VectorBackend, embedder: TextEmbedder,
                 index: IndexSettings) -> None:
        self.episodes = episodes
        self.vectors = vectors
        self.embedder = embedder
        self.index = index

    def get(self, *, namespace: str, episode_id: int) -> StoredEpisode:
        episode = self.episodes.get(namespace, episode_id)
        if episode is None:
            raise EpisodeNotFound(f"episode {episode_id} does not exist in this namespace")
        return episode

    def trajectory(self, *, namespace: str, episode_id: int) -> Trajectory:
        """The stored (redacted) run of an episode."""
        trajectory = self.episodes.trajectory(namespace, episode_id)
        if trajectory is None:
            raise EpisodeNotFound(f"episode {episode_id} does not exist in this namespace")
        return trajectory

    def page(self, *, namespace: str, flt: EpisodeFilter, cursor: int | None, limit: int) -> list[StoredEpisode]:
        """Episodes in id order after the cursor."""
        return self.episodes.page(namespace, flt, after_id=cursor, limit=limit)

    def stats(self, *, namespace: str) -> dict:
        """Counts of the namespace (episodes, outcomes, dedups, evictions) and its index."""
        stats = self.episodes.stats(namespace)
        described = self.vectors.describe(namespace)
        stats.update(
            {
                "namespace": namespace,
                "vector_backend": self.vectors.name,
                "index_size": described["index_size"],
                "index_type": described["index_type"],
                "index_bytes": described["index_bytes"],
                "capacity": self.index.capacity,
                "eviction_policy": self.index.eviction_policy,
                "embedding_model": self.embedder.name,
                "dimension": self.embedder.dimension,
                # whether concurrent requests' texts share a model call, and what the start-up timing chose
                "micro_batch": {"max_batch": getattr(self.embedder, "max_batch", 1),
                                "calibration": getattr(self.embedder, "calibration", None)},
            }
        )
        return stats
