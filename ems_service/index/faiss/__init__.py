"""The FAISS backend (faiss's home package): exact per namespace, IVF-SQ8 above a size, with snapshots.

- `backend`: FaissBackend, the VectorBackend that keeps every namespace's index in step with the episodes table.
- `namespace`: NamespaceIndex, the per-namespace index with its filter fields and search.
- `approx`: when and how the approximate (IVF-SQ8) index is trained.
- `snapshot`: writing and reading an index to and from disk.
"""

from ems_service.index.faiss.approx import ApproxConfig, set_threads
from ems_service.index.faiss.backend import FaissBackend
from ems_service.index.faiss.namespace import NamespaceIndex
from ems_service.index.faiss.snapshot import snapshot_path

__all__ = ["ApproxConfig", "FaissBackend", "NamespaceIndex", "set_threads", "snapshot_path"]
