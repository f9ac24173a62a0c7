"""Vector backends behind one seam (`base.VectorBackend`), chosen by EMS_VECTOR__BACKEND.

- `base`: the Protocol, its row / query / hit types.
- `faiss`: the embedded default: every namespace's vectors in this process (FAISS), snapshots on disk.
- `pgvector`: the vectors in the episodes table of PostgreSQL (pgvector), searched there; nothing in the process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ems_service.index.base import Hit, IndexRow, Query, VectorBackend

if TYPE_CHECKING:
    from ems_service.config import Settings
    from ems_service.repositories.index_feed import IndexFeed

__all__ = ["Hit", "IndexRow", "Query", "VectorBackend", "build_backend"]


def build_backend(settings: Settings, store: IndexFeed, *, model: str, dimension: int) -> VectorBackend:
    """The configured backend (only its own library is imported)."""
    if settings.vector.backend == "pgvector":
        from ems_service.index.pgvector import PgvectorBackend

        return PgvectorBackend(store, settings.vector, model=model, dimension=dimension)
    from ems_service.index.faiss import ApproxConfig, FaissBackend, set_threads

    ix = settings.index
    set_threads(ix.faiss_threads)
    return FaissBackend(store, data_dir=settings.data_dir, model=model, dimension=dimension,
                        approx=ApproxConfig.from_settings(ix))
