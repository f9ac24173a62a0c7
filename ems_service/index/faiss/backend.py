"""The FAISS backend: per-namespace indexes in this process, kept in step with the SQL store (load, catch up,
rebuild, follow other processes' writes, snapshot)."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ems_service.errors import DimensionMismatch, SnapshotUnusable
from ems_service.index.base import Hit, IndexRow, Query
from ems_service.index.faiss.approx import ApproxConfig
from ems_service.index.faiss.namespace import NamespaceIndex
from ems_service.index.faiss.snapshot import files, snapshot_path

if TYPE_CHECKING:
    from ems_service.repositories.index_feed import IndexFeed

logger = logging.getLogger(__name__)


_TYPES = {"flat": "exact (float32 rows, faiss.knn_inner_product)", "ivf_sq8": "IndexIVFScalarQuantizer(8bit)"}


class FaissBackend:
    """FAISS is a cache of the episodes table: every index can be rebuilt from stored vectors."""

    name = "faiss"

    def __init__(self, store: IndexFeed, *, data_dir: Path, model: str, dimension: int,
                 approx: ApproxConfig | None = None) -> None:
        self.store = store
        self.approx = approx or ApproxConfig()
        self.data_dir = data_dir
        self.model = model
        self.dimension = dimension
        self._indexes: dict[str, NamespaceIndex] = {}
        self._dirty: set[str] = set()
        self._lock = threading.Lock()
        self.last_start: dict[str, str] = {}

    def namespace(self, namespace: str) -> NamespaceIndex:
        """The index of `namespace`, loaded (or rebuilt) on first use."""
        with self._lock:
            index = self._indexes.get(namespace)
            if index is None:
                index = self._open(namespace)
                self._indexes[namespace] = index
            return index

    def start(self) -> None:
        """Open every namespace that has episodes (snapshot + catch-up, or rebuild)."""
        for ns in self.store.namespaces():
            self.namespace(ns)

    def search(self, namespace: str, query: Query) -> list[Hit]:
        index = self.namespace(namespace)
        if query.prefer_domain and query.domain is None:
            return index.search_preferring_domain(query.vector, query.k, domain=query.prefer_domain,
                                                  boost=query.boost, exclude_task_id=query.exclude_task_id,
                                                  success=query.success)
        return index.search(query.vector, query.k, domain=query.domain, success=query.success,
                            exclude_task_id=query.exclude_task_id)

    def count(self, namespace: str) -> int:
        return len(self.namespace(namespace))

    def ids(self, namespace: str) -> set[int]:
        return self.namespace(namespace).ids()

    def describe(self, namespace: str) -> dict[str, object]:
        index = self.namespace(namespace)
        return {"index_type": _TYPES[index.kind], "index_size": len(index), "index_bytes": index.nbytes(),
                "start": self.last_start.get(namespace, "opened empty")}

    def _check_model(self, namespace: str, *, after_id: int = 0) -> None:
        """Raise DimensionMismatch when rows (with ids above `after_id`) hold another model's vectors."""
        for model, dim in self.store.embedding_models(namespace, after_id=after_id):
            if dim != self.dimension or model != self.model:
                raise DimensionMismatch(
                    f"namespace {namespace!r} holds vectors of {model} ({dim}-d) but the embedder is "
                    f"{self.model} ({self.dimension}-d): re-embed with `webcoach export` + `webcoach import`"
                )

    def _open(self, namespace: str) -> NamespaceIndex:
        started = time.perf_counter()
        opened = self._from_snapshot(namespace)
        if opened is None:
            self._check_model(namespace)
            index, how = self.rebuild(namespace), "rebuilt from stored vectors"
        else:
            index, how = opened
        self.last_start[namespace] = how
        logger.info("index %s ready: %d vectors (%s, %s) in %.2fs", namespace, len(index), index.kind, how,
                    time.perf_counter() - started)
        index.build_in_background()  # the exact index serves until the approximate one is ready
        return index

    def _from_snapshot(self, namespace: str) -> tuple[NamespaceIndex, str] | None:
        """The namespace's snapshot caught up with the table, or None when there is no usable one."""
        path = snapshot_path(self.data_dir, namespace)
        try:
            index = NamespaceIndex.load(path, model=self.model, dimension=self.dimension, approx=self.approx)
            # the rows a snapshot holds were checked when it was made: only newer ones need a look
            self._check_model(namespace, after_id=index.watermark)
            added, removed = self._catch_up(namespace, index)
            if len(index) != self.store.count(namespace):
                raise SnapshotUnusable("snapshot does not match the table after catch-up")
        except SnapshotUnusable as exc:
            if any(p.exists() for p in files(path)):
                logger.warning("index snapshot for %s not usable (%s); rebuilding from stored vectors", namespace, exc)
            return None
        return index, f"snapshot + {added} new, {removed} deleted"

    def rebuild(self, namespace: str) -> NamespaceIndex:
        """A fresh index from the stored vectors of `namespace`; never re-embeds."""
        index = NamespaceIndex(self.dimension, self.approx)
        index.deletion_seq = self.store.max_deletion_seq(namespace)
        for rows in self.store.iter_index_rows(namespace):
            index.add(rows)
        self._dirty.add(namespace)
        return index

    def _catch_up(self, namespace: str, index: NamespaceIndex) -> tuple[int, int]:
        added = 0
        for rows in self.store.iter_index_rows(namespace, after_id=index.watermark):
            index.add(rows)
            added += len(rows)
        deletions = self.store.deletions_since(namespace, index.deletion_seq)
        removed = index.remove([e for _, e in deletions]) if deletions else 0
        if deletions:
            index.deletion_seq = deletions[-1][0]
        if added or removed:
            self._dirty.add(namespace)
        return added, removed

    def follow(self, *, lookback: int) -> tuple[int, int]:
        """Pull in rows and deletions other processes committed (replicas sharing one database).

        Ids just below the watermark are re-checked, since concurrent transactions may commit out of id order.
        """
        added = removed = 0
        with self._lock:
            known = set(self._indexes)
        for ns in sorted(known | set(self.store.namespaces())):  # open ones too: they may have been emptied
            with self._lock:
                index = self._indexes.get(ns)
            if index is None:
                self.namespace(ns)
                continue
            fresh = [i for i in self.store.ids_from(ns, max(0, index.watermark - lookback)) if i not in index]
            if fresh:
                index.add(self.store.index_rows(ns, fresh))
                added += len(fresh)
            deletions = self.store.deletions_since(ns, index.deletion_seq)
            if deletions:
                removed += index.remove([e for _, e in deletions])
                index.deletion_seq = deletions[-1][0]
            if fresh or deletions:
                self._dirty.add(ns)
        return added, removed

    def add(self, namespace: str, rows: list[IndexRow]) -> None:
        index = self.namespace(namespace)
        index.add(rows)
        self._dirty.add(namespace)
        if index.wants_build():
            index.build_in_background()

    def remove(self, namespace: str, ids: list[int]) -> None:
        """Remove ids just deleted from the table, then apply the rest of the deletion log."""
        index = self.namespace(namespace)
        index.remove(ids)
        deletions = self.store.deletions_since(namespace, index.deletion_seq)
        if deletions:
            index.remove([e for _, e in deletions])
            index.deletion_seq = deletions[-1][0]
        self._dirty.add(namespace)

    def snapshot(self, *, force: bool = False) -> int:
        """Write changed indexes to disk; returns how many were written."""
        written = 0
        for ns in list(self._dirty if not force else self._indexes):
            index = self._indexes.get(ns)
            if index is None:
                continue
            self._dirty.discard(ns)
            index.save(snapshot_path(self.data_dir, ns), model=self.model)
            written += 1
        if written:
            logger.info("index snapshots written: %d", written)
        return written

    def maintain(self) -> None:
        """Start background builds of approximate indexes for namespaces that outgrew theirs; merge vector blocks;
        write changed snapshots."""
        with self._lock:
            indexes = list(self._indexes.values())
        for index in indexes:
            index.build_in_background()
            index.consolidate()
        self.snapshot()

    def close(self) -> None:
        self.maintain()

    def sizes(self) -> dict[str, int]:
        return {ns: len(ix) for ns, ix in self._indexes.items()}
