"""The vector-backend seam: what the memory service needs of wherever the vectors live.

Two implementations: `ems_service.index.faiss.FaissBackend` (every namespace's vectors in this process, kept in step
with the episodes table by snapshots, catch-up and following) and `ems_service.index.pgvector.PgvectorBackend` (the
vectors are a column of the episodes table, searched by PostgreSQL; nothing held in the process). The service,
stats, metrics and health checks talk to this Protocol only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class IndexRow:
    """What an index needs of an episode: its vector and the fields search filters on."""

    id: int
    vector: np.ndarray
    domain: str | None
    success: bool | None
    task_id: str | None


@dataclass(frozen=True)
class Hit:
    id: int
    score: float  # cosine (inner product of unit vectors), never boosted


@dataclass(frozen=True)
class Query:
    """One search: the `k` nearest of `vector` in a namespace, filtered.

    `domain` / `success` keep only rows with that value (a row without one never matches); `exclude_task_id` drops
    the runs of one task (rows without a task id stay). `prefer_domain` ranks that site's rows up by `boost`
    (hits keep their true cosine)."""

    vector: np.ndarray
    k: int
    domain: str | None = None
    success: bool | None = None
    exclude_task_id: str | None = None
    prefer_domain: str | None = None
    boost: float = 0.0

    @property
    def filtered(self) -> bool:
        return self.domain is not None or self.success is not None or self.exclude_task_id is not None


def merge_preferring(same: list[Hit], every: list[Hit], *, boost: float, k: int) -> list[Hit]:
    """The top k of two searches (the preferred site's, and all), the preferred ones scored `boost` higher: an
    episode of the run's own site ranks above one from elsewhere unless the other is more than `boost` closer."""
    same_ids = {h.id for h in same}
    merged = [(h.score + boost, h) for h in same] + [(h.score, h) for h in every if h.id not in same_ids]
    merged.sort(key=lambda x: (-x[0], x[1].id))
    return [h for _, h in merged[:k]]


class VectorBackend(Protocol):
    """Where the vectors live and how they are searched. Writes arrive after the episode rows committed (a backend
    whose vectors are in the rows has nothing to do then); every method is thread-safe."""

    name: str  # "faiss" | "pgvector"

    def start(self) -> None:
        """Make every namespace searchable (load, catch up or check the schema); called once before serving."""

    def add(self, namespace: str, rows: list[IndexRow]) -> None:
        """Index rows just committed (an id already present is replaced: a relabel)."""

    def remove(self, namespace: str, ids: list[int]) -> None:
        """Forget rows just deleted from the table."""

    def search(self, namespace: str, query: Query) -> list[Hit]:
        """The nearest rows of `query`, best first, ties by id."""

    def count(self, namespace: str) -> int:
        """Searchable rows of `namespace` (may trail other processes' writes by a follow interval)."""

    def ids(self, namespace: str) -> set[int]:
        """Ids of the searchable rows of `namespace` (for checks, not for the request path)."""

    def sizes(self) -> dict[str, int]:
        """Searchable rows per namespace this process knows, without a query to the database."""

    def describe(self, namespace: str) -> dict[str, object]:
        """`index_type`, `index_size`, `index_bytes` (held in this process) and `start` (how it was opened)."""

    def follow(self, *, lookback: int) -> tuple[int, int]:
        """Pull in rows and deletions other processes committed; (added, removed)."""

    def maintain(self) -> None:
        """Background work: approximate-index builds, snapshots."""

    def close(self) -> None:
        """Last maintenance before the process ends."""
