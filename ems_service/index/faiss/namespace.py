"""The index of one namespace: exact below a size, IVF-SQ8 above it, with its filter fields.

Small namespaces use one IndexIDMap2(IndexFlatIP): exact, and fast enough below a few tens of thousands of
vectors. Above `ApproxConfig.above` vectors an IndexIVFScalarQuantizer (8-bit codes) is built in the
background while the exact index keeps serving; then it replaces the exact index. Beside either index the
namespace keeps every vector once more (float32), aligned with its filter fields: that copy re-ranks the
IVF candidates exactly, answers filtered searches over small subsets by brute force, and trains rebuilds
without touching the database.
"""

from __future__ import annotations

import logging
import math
import threading
from pathlib import Path

import faiss
import numpy as np

from ems_service.errors import DimensionMismatch
from ems_service.index.base import Hit, IndexRow, merge_preferring
from ems_service.index.faiss.approx import (
    ApproxConfig,
    inner_products,
    search_params,
    selector_for,
    train_ivf,
    use_threads,
)

logger = logging.getLogger(__name__)

SUCCESS_CODE = {None: -1, False: 0, True: 1}


class _Vocab:
    """String <-> small int codes, so filters are numpy comparisons."""

    def __init__(self, items: list[str] | None = None) -> None:
        self.items: list[str] = list(items or [])
        self.codes = {s: i for i, s in enumerate(self.items)}

    def code(self, value: str | None, *, add: bool = True) -> int:
        if value is None:
            return -1
        if value not in self.codes and add:
            self.codes[value] = len(self.items)
            self.items.append(value)
        return self.codes.get(value, -2)


class NamespaceIndex:
    """Inner-product search over unit vectors (= cosine), with filter fields kept beside it."""

    _FIELDS = ("_ids", "_domain", "_success", "_task", "_alive", "_vec")

    def __init__(self, dimension: int, approx: ApproxConfig | None = None) -> None:
        self.dimension = dimension
        self.approx = approx or ApproxConfig()
        self.index: faiss.Index | None = faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))  # exact mode
        self.ivf: faiss.IndexIVFScalarQuantizer | None = None  # approximate mode
        self.trained_on = 0  # vectors the IVF was built from
        self._lock = threading.RLock()
        self._ids = np.zeros(0, dtype=np.int64)
        self._domain = np.zeros(0, dtype=np.int32)
        self._success = np.zeros(0, dtype=np.int8)
        self._task = np.zeros(0, dtype=np.int32)
        self._alive = np.zeros(0, dtype=bool)
        self._vec = np.zeros((0, dimension), dtype=np.float32)
        self._n = 0
        self._pos: dict[int, int] = {}
        self._build_log: list[tuple[str, np.ndarray, np.ndarray | None]] | None = None
        self._builder: threading.Thread | None = None
        self.domains = _Vocab()
        self.tasks = _Vocab()
        self.watermark = 0  # highest episode id added
        self.deletion_seq = 0  # last deletion-log entry applied

    def __len__(self) -> int:
        return len(self._pos)

    def __contains__(self, episode_id: int) -> bool:
        return episode_id in self._pos

    @property
    def kind(self) -> str:
        return "ivf_sq8" if self.ivf is not None else "flat"

    def ids(self) -> set[int]:
        with self._lock:
            return {int(i) for i in self._ids[: self._n][self._alive[: self._n]]}

    def nbytes(self) -> int:
        """Bytes held for the vectors and their fields (FAISS codes + ids, float32 copy, filter arrays)."""
        with self._lock:
            held = sum(getattr(self, name)[: self._n].nbytes for name in self._FIELDS)
            if self.ivf is not None:
                held += self.ivf.ntotal * (self.ivf.code_size + 8)
                held += self.ivf.nlist * self.dimension * 4
            elif self.index is not None:
                held += self.index.ntotal * (self.dimension * 4 + 8)
            return int(held)

    def _grow(self, extra: int) -> None:
        need = self._n + extra
        if need <= len(self._ids):
            return
        size = max(need, 2 * len(self._ids), 1024)
        for name in self._FIELDS:
            old = getattr(self, name)
            new = np.zeros((size, *old.shape[1:]), dtype=old.dtype)
            new[: self._n] = old[: self._n]
            setattr(self, name, new)

    def add(self, rows: list[IndexRow]) -> None:
        """Add vectors with their ids; ids already present are replaced."""
        if not rows:
            return
        vectors = np.ascontiguousarray(np.stack([r.vector for r in rows]), dtype=np.float32)
        if vectors.shape[1] != self.dimension:
            raise DimensionMismatch(f"vector dimension {vectors.shape[1]} != index dimension {self.dimension}")
        ids = np.array([r.id for r in rows], dtype=np.int64)
        with self._lock:
            present = [int(i) for i in ids if int(i) in self._pos]
            if present:
                self.remove(present)
            self._faiss().add_with_ids(vectors, ids)
            if self._build_log is not None:
                self._build_log.append(("add", ids, vectors))
            self._grow(len(rows))
            p0 = self._n
            self._vec[p0 : p0 + len(rows)] = vectors
            for r in rows:
                p = self._n
                self._ids[p] = r.id
                self._domain[p] = self.domains.code(r.domain)
                self._success[p] = SUCCESS_CODE[r.success]
                self._task[p] = self.tasks.code(r.task_id)
                self._alive[p] = True
                self._pos[r.id] = p
                self._n += 1
            self.watermark = max(self.watermark, int(ids.max()))

    def _faiss(self) -> faiss.Index:
        return self.ivf if self.ivf is not None else self.index

    def remove(self, ids: list[int]) -> int:
        """Remove ids (one FAISS call for the whole batch); returns how many were present."""
        with self._lock:
            present = [i for i in ids if i in self._pos]
            if not present:
                return 0
            arr = np.array(present, dtype=np.int64)
            self._faiss().remove_ids(arr)
            if self._build_log is not None:
                self._build_log.append(("remove", arr, None))
            for i in present:
                self._alive[self._pos.pop(i)] = False
            if self._n > 1024 and len(self._pos) < self._n // 2 and self._build_log is None:
                self._compact()
            return len(present)

    def _compact(self) -> None:
        keep = self._alive[: self._n]
        for name in self._FIELDS:
            setattr(self, name, getattr(self, name)[: self._n][keep].copy())
        self._n = int(keep.sum())
        self._pos = dict(zip(self._ids[: self._n].tolist(), range(self._n), strict=True))

    # -- search -----------------------------------------------------------------------------------------------

    def search(
        self,
        query: np.ndarray,
        k: int,
        *,
        domain: str | None = None,
        success: bool | None = None,
        exclude_task_id: str | None = None,
    ) -> list[Hit]:
        """Top-k by cosine. Exact mode: filters inside FAISS with an id selector, so results stay exact.
        Approximate mode: IVF candidates re-ranked exactly; small filtered subsets searched by brute force."""
        q = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
        use_threads()
        if q.shape[1] != self.dimension:
            raise DimensionMismatch(f"query dimension {q.shape[1]} != index dimension {self.dimension}")
        with self._lock:
            total = len(self)
            if total == 0 or k <= 0:
                return []
            mask = None
            if domain is not None or success is not None or exclude_task_id is not None:
                mask = self._alive[: self._n].copy()
                if domain is not None:
                    mask &= self._domain[: self._n] == self.domains.code(domain, add=False)
                if success is not None:
                    mask &= self._success[: self._n] == SUCCESS_CODE[success]
                if exclude_task_id is not None:
                    mask &= self._task[: self._n] != self.tasks.code(exclude_task_id, add=False)
                allowed = int(mask.sum())
                if allowed == 0:
                    return []
                if allowed == total:
                    mask = None
                total = allowed
            if self.ivf is None:
                return self._search_exact(q, min(k, total), mask)
            if mask is not None and total <= self.approx.exact_subset:
                return self._search_subset(q[0], min(k, total), np.flatnonzero(mask))
            return self._search_ivf(q, min(k, total), mask, total)

    def _selector(self, mask: np.ndarray) -> tuple[faiss.IDSelector, object]:
        return selector_for(self._ids[: self._n], mask, self._alive[: self._n], self.watermark)

    def _search_exact(self, q: np.ndarray, k: int, mask: np.ndarray | None) -> list[Hit]:
        params = keep = None
        if mask is not None:
            sel, keep = self._selector(mask)
            params = faiss.SearchParameters(sel=sel)
        scores, ids = self.index.search(q, k, params=params)  # type: ignore[union-attr]  # exact mode: index is set
        del keep
        return [Hit(int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=False) if i >= 0]

    def _search_subset(self, q: np.ndarray, k: int, positions: np.ndarray) -> list[Hit]:
        scores = inner_products(self._vec, q, positions)
        return self._top(scores, positions, k)

    def _search_ivf(self, q: np.ndarray, k: int, mask: np.ndarray | None, allowed: int) -> list[Hit]:
        # a filter that keeps a share s of the vectors visits 1/s times the lists, so about as many allowed
        # vectors are scanned as in an unfiltered query
        share = max(1, allowed) / len(self)
        sel, keep = self._selector(mask) if mask is not None else (None, None)
        params = search_params(self.ivf, math.ceil(self.approx.nprobe / share), sel)
        wanted = min(len(self), k * max(1, self.approx.rerank))
        _, ids = self.ivf.search(q, wanted, params=params)  # type: ignore[union-attr]  # approximate mode: ivf is set
        del keep
        positions = np.array([self._pos[i] for i in ids[0].tolist() if i >= 0], dtype=np.int64)
        if positions.size == 0:
            return []
        scores = inner_products(self._vec, q[0], positions)
        return self._top(scores, positions, k)

    def _top(self, scores: np.ndarray, positions: np.ndarray, k: int) -> list[Hit]:
        if scores.size > k:
            part = np.argpartition(-scores, k - 1)[:k]
            scores, positions = scores[part], positions[part]
        ids = self._ids[positions]
        order = np.lexsort((ids, -scores))
        return [Hit(int(ids[i]), float(scores[i])) for i in order]

    def search_preferring_domain(
        self, query: np.ndarray, k: int, *, domain: str | None, boost: float, exclude_task_id: str | None = None,
        success: bool | None = None,
    ) -> list[Hit]:
        """Top-k by cosine + `boost` for episodes of the query's own site (the coach's retrieval).

        Two searches (same site, and all) merged, so an episode of the same site ranks above one from
        elsewhere unless the other is more than `boost` more similar. Hits keep their true cosine.
        """
        hits = self.search(query, k, exclude_task_id=exclude_task_id, success=success)
        if not domain or boost <= 0:
            return hits
        same = self.search(query, k, domain=domain, exclude_task_id=exclude_task_id, success=success)
        return merge_preferring(same, hits, boost=boost, k=k)

    # -- the approximate index ------------------------------------------------------------------------------

    def wants_build(self) -> bool:
        """True when the namespace has outgrown its index: exact above the threshold, or an IVF trained on
        less than a quarter of what it now holds."""
        if self.approx.above <= 0 or self._builder is not None:
            return False
        n = len(self)
        if self.ivf is None:
            return n >= self.approx.above
        return n >= 4 * self.trained_on and self.approx.nlist(n) > self.ivf.nlist

    def build_in_background(self) -> threading.Thread | None:
        """Start building the approximate index; searches keep using the current one until it is ready."""
        with self._lock:
            if not self.wants_build():
                return None
            self._builder = threading.Thread(target=self.build_approx, name="ivf-build", daemon=True)
            self._builder.start()
            return self._builder

    def wait_for_build(self, timeout: float | None = None) -> None:
        """Block until a background build (if any) has finished."""
        builder = self._builder
        if builder is not None and builder is not threading.current_thread():
            builder.join(timeout)

    def build_approx(self) -> None:
        """Train and fill an IVF-SQ8 index from the float32 copy, then swap it in (changes made meanwhile
        are replayed first)."""
        try:
            with self._lock:
                self._builder = self._builder or threading.current_thread()
                alive = self._alive[: self._n]
                ids = self._ids[: self._n][alive].copy()
                vecs = self._vec[: self._n][alive]
                self._build_log = []
            ivf = train_ivf(vecs, ids, self.approx)
            with self._lock:
                for op, op_ids, op_vecs in self._build_log:
                    if op == "add":
                        ivf.add_with_ids(op_vecs, op_ids)
                    else:
                        ivf.remove_ids(op_ids)
                self.ivf, self.index = ivf, None
                self.trained_on = len(ids)
            logger.info("approximate index ready: %d vectors, %d lists", ivf.ntotal, ivf.nlist)
        finally:
            with self._lock:
                self._build_log = None
                self._builder = None

    # -- snapshots ------------------------------------------------------------------------------------------

    def save(self, path: Path, *, model: str) -> None:
        """Write a snapshot atomically (see ems_service.index.faiss.snapshot)."""
        from ems_service.index.faiss.snapshot import save

        save(self, path, model=model)

    @classmethod
    def load(cls, path: Path, *, model: str, dimension: int, approx: ApproxConfig | None = None) -> NamespaceIndex:
        """Read a snapshot; raises SnapshotUnusable when it is missing, corrupt or for another model."""
        from ems_service.index.faiss.snapshot import load

        return load(path, model=model, dimension=dimension, approx=approx)

    def restore(self, *, ids: np.ndarray, domain: np.ndarray, success: np.ndarray, task: np.ndarray,
                vectors: np.ndarray, domains: list[str], tasks: list[str]) -> None:
        """Take over the fields of a snapshot (every row alive)."""
        self._ids = ids.astype(np.int64, copy=False)
        self._domain = domain.astype(np.int32, copy=False)
        self._success = success.astype(np.int8, copy=False)
        self._task = task.astype(np.int32, copy=False)
        self._vec = vectors.astype(np.float32, copy=False)
        self._n = len(self._ids)
        self._alive = np.ones(self._n, dtype=bool)
        self._pos = dict(zip(self._ids.tolist(), range(self._n), strict=True))
        self.domains = _Vocab(domains)
        self.tasks = _Vocab(tasks)

    def snapshot_state(self) -> tuple[np.ndarray, dict[str, np.ndarray], dict]:
        """What a snapshot writes, taken consistently under the lock: the serialized FAISS index, the rows'
        fields (compacted first, so these are views no later change touches) and the metadata."""
        with self._lock:
            if self._n > len(self._pos) and self._build_log is None:
                self._compact()
            n = self._n
            alive = self._alive[:n]
            live = slice(None) if alive.all() else alive  # dead rows remain only while a build runs: copy then
            fields = {name: getattr(self, f"_{name}")[:n][live] for name in ("ids", "domain", "success", "task")}
            fields["vectors"] = self._vec[:n][live]
            meta = {"watermark": self.watermark, "deletion_seq": self.deletion_seq, "ntotal": len(self),
                    "dimension": self.dimension, "domains": list(self.domains.items), "tasks": list(self.tasks.items),
                    "kind": self.kind, "trained_on": self.trained_on}
            return faiss.serialize_index(self._faiss()), fields, meta

    def adopt(self, index: faiss.Index, *, trained_on: int) -> None:
        """Serve from a FAISS index read from a snapshot (exact IDMap2 or IVF)."""
        if isinstance(index, faiss.IndexIVF):
            self.index, self.ivf, self.trained_on = None, index, trained_on
        else:
            self.index, self.ivf = index, None
