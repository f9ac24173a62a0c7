"""The index of one namespace: exact below a size, IVF-SQ8 above it, with its filter fields.

Every vector is held once, as float32 rows in blocks (ems_service.index.faiss.vectors) aligned with the filter
fields. Small namespaces are searched exactly over those rows (faiss.knn_inner_product in place): no FAISS index
beside them, so an episode costs 1,562 bytes instead of 3,098 (the IndexIDMap2(IndexFlatIP) held a second copy).
Above `ApproxConfig.above` vectors an IndexIVFScalarQuantizer (8-bit codes) is built in the background while exact
search keeps serving; the float32 rows then re-rank its candidates exactly, answer filtered searches over small
subsets by brute force, and train rebuilds without touching the database.

Filters: a domain's rows are read from its postings (ems_service.index.faiss.filters), never by comparing every
row; filters that keep most rows (success, an excluded task) filter the IVF's candidates, and only when too few
pass is every row compared. The IVF's search paths are in ems_service.index.faiss.ivf_search.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import faiss
import numpy as np

from ems_service.errors import DimensionMismatch
from ems_service.index.base import Hit, IndexRow, merge_preferring
from ems_service.index.faiss.approx import (
    ApproxConfig,
    add_assigned,
    centroids,
    has_graph_coarse,
    train_ivf,
    use_threads,
)
from ems_service.index.faiss.filters import Postings, Vocab
from ems_service.index.faiss.ivf_search import IvfSearch
from ems_service.index.faiss.sites import SitePlans
from ems_service.index.faiss.vectors import VectorBlocks, gather

logger = logging.getLogger(__name__)

SUCCESS_CODE = {None: -1, False: 0, True: 1}
POST_FILTER_SHARE = 0.2  # a filter expected to keep at least this share of rows filters the IVF's candidates


class NamespaceIndex(IvfSearch):
    """Inner-product search over unit vectors (= cosine), with filter fields kept beside it."""

    _FIELDS = ("_ids", "_domain", "_success", "_task", "_alive", "_list")

    def __init__(self, dimension: int, approx: ApproxConfig | None = None) -> None:
        self.dimension = dimension
        self.approx = approx or ApproxConfig()
        self.ivf: faiss.IndexIVFScalarQuantizer | None = None  # approximate mode; None: exact over the rows
        self._graph_coarse = False  # the IVF's coarse quantizer is an HNSW graph
        self._params: dict[tuple[int, int | None], faiss.SearchParametersIVF] = {}  # unfiltered, per nprobe
        self.trained_on = 0  # vectors the IVF was built from
        self._lock = threading.RLock()
        self._ids = np.zeros(0, dtype=np.int64)
        self._domain = np.zeros(0, dtype=np.int32)
        self._success = np.zeros(0, dtype=np.int8)
        self._task = np.zeros(0, dtype=np.int32)
        self._alive = np.zeros(0, dtype=bool)
        self._list = np.zeros(0, dtype=np.int32)  # the IVF list of each row (approximate mode)
        self._centroids = np.zeros((0, dimension), dtype=np.float32)  # the IVF's, for filtered searches
        self._vectors = VectorBlocks(dimension)
        self._n = 0
        self._pos: dict[int, int] = {}
        self._build_log: list[tuple[str, np.ndarray, np.ndarray | None]] | None = None
        self._builder: threading.Thread | None = None
        self.domains = Vocab()
        self.tasks = Vocab()
        self._by_domain = Postings()  # positions of each domain's rows
        self._site_plans = SitePlans()  # recent site filters' IVF plans (ems_service.index.faiss.sites)
        self._success_count = np.zeros(3, dtype=np.int64)  # live rows per success code + 1
        self._task_count: dict[int, int] = {}  # live rows per task code
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
        """Bytes held for the vectors and their fields (float32 rows, filter arrays, IVF codes + ids)."""
        with self._lock:
            held = sum(getattr(self, name)[: self._n].nbytes for name in self._FIELDS) + self._vectors.nbytes()
            held += self._by_domain.nbytes()
            if self.ivf is not None:
                held += self.ivf.ntotal * (self.ivf.code_size + 8)
                held += self.ivf.nlist * self.dimension * 4
            return int(held)

    def _grow(self, extra: int) -> None:
        """Room for `extra` more rows in the filter fields (22 bytes a row; the vectors need none)."""
        need = self._n + extra
        if need <= len(self._ids):
            return
        self._resize_fields(max(need, 2 * len(self._ids), 1024))

    def _resize_fields(self, size: int) -> None:
        for name in self._FIELDS:
            old = getattr(self, name)
            new = np.zeros(size, dtype=old.dtype)
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
            lists = add_assigned(self.ivf, vectors, ids) if self.ivf is not None else None
            if self._build_log is not None:
                self._build_log.append(("add", ids, vectors))
            self._grow(len(rows))
            self._vectors.append(vectors)
            p0 = self._n
            for r in rows:
                p = self._n
                self._ids[p] = r.id
                self._domain[p] = self.domains.code(r.domain)
                self._success[p] = SUCCESS_CODE[r.success]
                self._task[p] = task = self.tasks.code(r.task_id)
                self._task_count[task] = self._task_count.get(task, 0) + 1
                self._alive[p] = True
                self._pos[r.id] = p
                self._n += 1
            self._by_domain.add(self._domain[p0 : self._n], p0)
            self._site_plans.changed(np.unique(self._domain[p0 : self._n]).tolist())
            if lists is not None:
                self._list[p0 : self._n] = lists
            self._success_count += np.bincount(self._success[p0 : self._n] + 1, minlength=3)
            self.watermark = max(self.watermark, int(ids.max()))

    def remove(self, ids: list[int]) -> int:
        """Remove ids (one FAISS call for the whole batch); returns how many were present."""
        with self._lock:
            present = [i for i in ids if i in self._pos]
            if not present:
                return 0
            arr = np.array(present, dtype=np.int64)
            if self.ivf is not None:
                self.ivf.remove_ids(arr)
            if self._build_log is not None:
                self._build_log.append(("remove", arr, None))
            for i in present:
                p = self._pos.pop(i)
                self._alive[p] = False
                self._site_plans.changed((int(self._domain[p]),))
                self._success_count[self._success[p] + 1] -= 1
                self._task_count[int(self._task[p])] -= 1
            if self._n > 1024 and len(self._pos) < self._n // 2 and self._build_log is None:
                self._compact()
            return len(present)

    def _compact(self) -> None:
        """Drop removed rows (positions change; a copy under the lock, after more than half were removed)."""
        keep = self._alive[: self._n]
        self._vectors = VectorBlocks(self.dimension, self._vectors.take(keep))
        for name in self._FIELDS:
            setattr(self, name, getattr(self, name)[: self._n][keep].copy())
        self._n = int(keep.sum())
        self._pos = dict(zip(self._ids[: self._n].tolist(), range(self._n), strict=True))
        self._by_domain = Postings.build(self._domain[: self._n])
        self._site_plans.clear()

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
        """Top-k by cosine, ties by id. Exact mode: every allowed row scored (unfiltered: FAISS over the blocks;
        filtered: the allowed positions). Approximate mode: IVF candidates re-ranked exactly; small filtered subsets
        searched by brute force."""
        q = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
        use_threads()
        if q.shape[1] != self.dimension:
            raise DimensionMismatch(f"query dimension {q.shape[1]} != index dimension {self.dimension}")
        with self._lock:
            total = len(self)
            if total == 0 or k <= 0:
                return []
            if domain is None and success is None and exclude_task_id is None:
                if self.ivf is not None:
                    return self._search_ivf(q, min(k, total), None)
                removed = self._alive[: self._n] if self._n > total else None  # they stay until compaction
                scores, positions = self._vectors.search(q[0], min(k, total), removed)
                return self._top(scores, positions, min(k, total))
            success_code = SUCCESS_CODE[success] if success is not None else None
            task_code = self.tasks.code(exclude_task_id, add=False) if exclude_task_id is not None else None
            if domain is not None:
                key = (self.domains.code(domain, add=False), success_code, task_code)
                plan = self._site_plans.get(key) if self.ivf is not None else None
                if plan is not None:
                    return self._search_site(q, min(k, plan.size), plan)
                positions = self._domain_positions(key[0], success_code, task_code)
            else:
                expected = float(self._success_count[success_code + 1] if success_code is not None else total)
                if task_code is not None:
                    expected *= 1 - self._task_count.get(task_code, 0) / total  # as if independent of success
                if self.ivf is not None and expected >= POST_FILTER_SHARE * total:
                    hits = self._search_ivf_post_filtered(q, k, success_code, task_code, expected / total)
                    if hits is not None:
                        return hits
                    if success_code is None and task_code is not None:  # the task's own runs crowd the query
                        return self._search_ivf_excluding(q, k, task_code, expected / total)
                mask = self._alive[: self._n].copy()
                if success_code is not None:
                    mask &= self._success[: self._n] == success_code
                if task_code is not None:
                    mask &= self._task[: self._n] != task_code
                positions = np.flatnonzero(mask)
            if positions.size == 0:
                return []
            if self.ivf is None or positions.size <= self.approx.exact_subset:
                return self._search_subset(q[0], min(k, positions.size), positions)
            if domain is not None:
                plan = self._site_plan(positions)
                self._site_plans.put(key, plan)
                return self._search_site(q, min(k, positions.size), plan)
            return self._search_ivf(q, min(k, positions.size), positions)

    def _domain_positions(self, code: int, success_code: int | None, task_code: int | None) -> np.ndarray:
        """The live positions of a domain's rows that pass the other filters (read from its postings)."""
        positions = self._by_domain.get(code)
        keep = self._alive[positions]
        if success_code is not None:
            keep &= self._success[positions] == success_code
        if task_code is not None:
            keep &= self._task[positions] != task_code
        return positions[keep].astype(np.int64)

    def _search_subset(self, q: np.ndarray, k: int, positions: np.ndarray) -> list[Hit]:
        scores = self._vectors.inner_products(q, positions)
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
        """Train and fill an IVF-SQ8 index from the float32 rows, then swap it in (changes made meanwhile
        are replayed first). The rows are read off the lock: rows once written never change."""
        try:
            with self._lock:
                self._builder = self._builder or threading.current_thread()
                alive = self._alive[: self._n].copy()
                ids = self._ids[: self._n].copy()
                spans = self._vectors.spans()
                self._build_log = []
            ivf, lists = train_ivf(spans, ids, alive, self.approx)
            ids = ids[alive]
            middle = centroids(ivf)
            with self._lock:
                self._list[: len(lists)] = lists
                for op, op_ids, op_vecs in self._build_log:
                    if op == "add":
                        added = add_assigned(ivf, op_vecs, op_ids)  # type: ignore[arg-type]  # an add has vectors
                        for i, li in zip(op_ids.tolist(), added.tolist(), strict=True):
                            if i in self._pos:
                                self._list[self._pos[i]] = li
                    else:
                        ivf.remove_ids(op_ids)
                self.ivf, self._graph_coarse, self._centroids = ivf, has_graph_coarse(ivf), middle
                self._params = {}
                self._site_plans.clear()
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
        """Take over the fields of a snapshot (every row alive; its IVF, if any, is adopted next). The vectors (a
        mapped file) become the base block, never copied; the fields get room to grow now, so the first writes
        after start-up copy nothing."""
        n = len(ids)
        self._n = 0
        self._resize_fields(n + max(1024, n // 8))
        for name, values in (("_ids", ids), ("_domain", domain), ("_success", success), ("_task", task)):
            getattr(self, name)[:n] = values
        self._alive[:n] = True
        self._n = n
        self._vectors = VectorBlocks(self.dimension, vectors)
        self._pos = dict(zip(self._ids[:n].tolist(), range(n), strict=True))
        self.domains = Vocab(domains)
        self.tasks = Vocab(tasks)
        self._by_domain = Postings.build(self._domain[:n])
        self._site_plans.clear()
        self._success_count = np.bincount(self._success[:n] + 1, minlength=3).astype(np.int64)
        counts = np.bincount(self._task[:n] + 1)  # codes: -1 (no task id) and 0..len(tasks) - 1
        codes = np.flatnonzero(counts)
        self._task_count = dict(zip((codes - 1).tolist(), counts[codes].tolist(), strict=True))

    def snapshot_state(self) -> tuple[np.ndarray | None, dict[str, np.ndarray], list[np.ndarray], dict]:
        """What a snapshot writes, taken consistently under the lock: the serialized IVF (None in exact mode), the
        rows' fields and vectors (compacted first, so these are views no later change touches; the vectors as the
        blocks they are held in) and the metadata."""
        with self._lock:
            if self._n > len(self._pos) and self._build_log is None:
                self._compact()
            n = self._n
            alive = self._alive[:n]
            live = slice(None) if alive.all() else alive  # dead rows remain only while a build runs: copy then
            fields = {name: getattr(self, f"_{name}")[:n][live] for name in ("ids", "domain", "success", "task", "list")}
            spans = self._vectors.spans()
            vectors = [rows for _, rows in spans] if alive.all() else [gather(spans, self.dimension, alive)]
            meta = {"watermark": self.watermark, "deletion_seq": self.deletion_seq, "ntotal": len(self),
                    "dimension": self.dimension, "domains": list(self.domains.items), "tasks": list(self.tasks.items),
                    "kind": self.kind, "trained_on": self.trained_on}
            blob = faiss.serialize_index(self.ivf) if self.ivf is not None else None
            return blob, fields, vectors, meta

    def ids_by_position(self) -> np.ndarray:
        """The rows' ids in position order (a view; removed rows included until compaction)."""
        return self._ids[: self._n]

    def adopt(self, ivf: faiss.IndexIVFScalarQuantizer | None, *, trained_on: int,
              lists: np.ndarray | None = None) -> None:
        """Serve from an IVF read from a snapshot (None: exact search over the rows); `lists`: each row's list in
        it, by position."""
        if lists is not None:
            self._list[: len(lists)] = lists
        self.ivf, self.trained_on, self._params = ivf, (trained_on if ivf is not None else 0), {}
        self._site_plans.clear()
        self._graph_coarse = ivf is not None and has_graph_coarse(ivf)
        if ivf is not None:
            self._centroids = centroids(ivf)

    def consolidate(self) -> bool:
        """Merge the vectors' tail blocks into one when there are three or more (fewer exact-search calls); the
        copy is made off the lock, by maintenance, never by a request. The first block (a mapped snapshot's
        vectors, or the first rows) is left as it is."""
        with self._lock:
            vectors = self._vectors
            tail = vectors.spans()[1:]
        if len(tail) < 3:
            return False
        merged = gather(tail, self.dimension)
        with self._lock:
            return self._vectors is vectors and vectors.merge_tail(tail, merged)
