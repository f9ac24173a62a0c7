"""FAISS vector index (faiss's home package): exact per namespace, IVF-SQ8 above a size, with snapshots.

- `namespace`: NamespaceIndex, the per-namespace index with its filter fields and search.
- `approx`: when and how the approximate (IVF-SQ8) index is trained.
- `snapshot`: writing and reading an index to and from disk.
"""

from ems_service.index.approx import ApproxConfig, set_threads
from ems_service.index.namespace import Hit, NamespaceIndex
from ems_service.index.snapshot import snapshot_path

__all__ = ["ApproxConfig", "Hit", "NamespaceIndex", "set_threads", "snapshot_path"]
