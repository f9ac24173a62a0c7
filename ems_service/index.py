"""FAISS vector index (faiss's home module): one IndexIDMap2(IndexFlatIP) per namespace, with snapshots."""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

import faiss
import numpy as np

from ems_service.errors import DimensionMismatch
from ems_service.feed import IndexRow

logger = logging.getLogger(__name__)

_SUCCESS_CODE = {None: -1, False: 0, True: 1}


@dataclass(frozen=True)
class Hit:
    id: int
    score: float


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
    """Exact inner-product search over unit vectors (= cosine), with filter fields kept beside it."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.index = faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))
        self._lock = threading.RLock()
        self._ids = np.zeros(0, dtype=np.int64)
        self._domain = np.zeros(0, dtype=np.int32)
        self._success = np.zeros(0, dtype=np.int8)
        self._task = np.zeros(0, dtype=np.int32)
        self._alive = np.zeros(0, dtype=bool)
        self._n = 0
        self._pos: dict[int, int] = {}
        self.domains = _Vocab()
        self.tasks = _Vocab()
        self.watermark = 0  # highest episode id added
        self.deletion_seq = 0  # last deletion-log entry applied

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def __contains__(self, episode_id: int) -> bool:
        return episode_id in self._pos

    def ids(self) -> set[int]:
        with self._lock:
            return {int(i) for i in self._ids[: self._n][self._alive[: self._n]]}

    def _grow(self, extra: int) -> None:
        need = self._n + extra
        if need <= len(self._ids):
            return
        size = max(need, 2 * len(self._ids), 1024)
        for name in ("_ids", "_domain", "_success", "_task", "_alive"):
            old = getattr(self, name)
            new = np.zeros(size, dtype=old.dtype)
            new[: self._n] = old[: self._n]
            setattr(self, name, new)

    def add(self, rows: list[IndexRow]) -> None:
        """Add vectors with their ids; ids already present are replaced."""
        rows = [r for r in rows]
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
            self.index.add_with_ids(vectors, ids)
            self._grow(len(rows))
            for r in rows:
                p = self._n
                self._ids[p] = r.id
                self._domain[p] = self.domains.code(r.domain)
                self._success[p] = _SUCCESS_CODE[r.success]
                self._task[p] = self.tasks.code(r.task_id)
                self._alive[p] = True
                self._pos[r.id] = p
                self._n += 1
            self.watermark = max(self.watermark, int(ids.max()))

    def remove(self, ids: list[int]) -> int:
        """Remove ids (one rewrite of the flat array for the whole batch); returns how many were present."""
        with self._lock:
            present = [i for i in ids if i in self._pos]
            if not present:
                return 0
            self.index.remove_ids(np.array(present, dtype=np.int64))
            for i in present:
                self._alive[self._pos.pop(i)] = False
            if self._n > 1024 and len(self._pos) < self._n // 2:
                self._compact()
            return len(present)

    def _compact(self) -> None:
        keep = self._alive[: self._n]
        for name in ("_ids", "_domain", "_success", "_task"):
            setattr(self, name, getattr(self, name)[: self._n][keep].copy())
        self._n = int(keep.sum())
        self._alive = np.ones(self._n, dtype=bool)
        self._pos = {int(i): p for p, i in enumerate(self._ids[: self._n])}

    def search(
        self,
        query: np.ndarray,
        k: int,
        *,
        domain: str | None = None,
        success: bool | None = None,
        exclude_task_id: str | None = None,
    ) -> list[Hit]:
        """Top-k by cosine; filters are applied inside FAISS with an id selector, so results stay exact."""
        q = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
        if q.shape[1] != self.dimension:
            raise DimensionMismatch(f"query dimension {q.shape[1]} != index dimension {self.dimension}")
        with self._lock:
            total = len(self)
            if total == 0 or k <= 0:
                return []
            params = None
            if domain is not None or success is not None or exclude_task_id is not None:
                mask = self._alive[: self._n].copy()
                if domain is not None:
                    mask &= self._domain[: self._n] == self.domains.code(domain, add=False)
                if success is not None:
                    mask &= self._success[: self._n] == _SUCCESS_CODE[success]
                if exclude_task_id is not None:
                    mask &= self._task[: self._n] != self.tasks.code(exclude_task_id, add=False)
                allowed = self._ids[: self._n][mask]
                if allowed.size == 0:
                    return []
                if allowed.size < total:
                    params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed))
                total = int(allowed.size)
            scores, ids = self.index.search(q, min(k, total), params=params)
        return [Hit(int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=False) if i >= 0]

    def search_preferring_domain(
        self, query: np.ndarray, k: int, *, domain: str | None, boost: float, exclude_task_id: str | None = None,
        success: bool | None = None,
    ) -> list[Hit]:
        """Top-k by cosine + `boost` for episodes of the query's own site (the coach's retrieval).

        Two exact searches (same site, and all) merged, so an episode of the same site ranks above one from
        elsewhere unless the other is more than `boost` more similar. Hits keep their true cosine.
        """
        hits = self.search(query, k, exclude_task_id=exclude_task_id, success=success)
        if not domain or boost <= 0:
            return hits
        same = self.search(query, k, domain=domain, exclude_task_id=exclude_task_id, success=success)
        same_ids = {h.id for h in same}
        merged = [(h.score + boost, h) for h in same] + [(h.score, h) for h in hits if h.id not in same_ids]
        merged.sort(key=lambda x: (-x[0], x[1].id))
        return [h for _, h in merged[:k]]

    # -- snapshots ------------------------------------------------------------------------------------------

    def save(self, path: Path, *, model: str) -> None:
        """Write index + filter fields + watermarks atomically (tmp files, then rename)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            if self._n > len(self._pos):
                self._compact()
            n = self._n
            meta = {
                "watermark": self.watermark, "deletion_seq": self.deletion_seq, "ntotal": len(self),
                "dimension": self.dimension, "model": model, "domains": self.domains.items, "tasks": self.tasks.items,
            }
            tmp = path.with_suffix(".tmp")
            faiss.write_index(self.index, str(tmp))
            np.savez(path.with_suffix(".npz.tmp.npz"), ids=self._ids[:n], domain=self._domain[:n],
                     success=self._success[:n], task=self._task[:n])
        os.replace(path.with_suffix(".npz.tmp.npz"), path.with_suffix(".npz"))
        os.replace(tmp, path)
        tmp_meta = path.with_suffix(".json.tmp")
        tmp_meta.write_text(json.dumps(meta))
        os.replace(tmp_meta, path.with_suffix(".json"))

    @classmethod
    def load(cls, path: Path, *, model: str, dimension: int) -> NamespaceIndex:
        """Read a snapshot; raises ValueError when it is missing, corrupt or for another model."""
        meta_path = path.with_suffix(".json")
        if not path.exists() or not meta_path.exists() or not path.with_suffix(".npz").exists():
            raise ValueError("snapshot missing")
        meta = json.loads(meta_path.read_text())
        if meta.get("model") != model or meta.get("dimension") != dimension:
            raise ValueError("snapshot was made with another embedding model")
        try:
            index = faiss.read_index(str(path))
            arrays = np.load(path.with_suffix(".npz"))
        except Exception as exc:  # noqa: BLE001 - faiss raises RuntimeError on corrupt files
            raise ValueError(f"snapshot unreadable: {exc}") from exc
        if index.ntotal != meta["ntotal"] or index.d != dimension or len(arrays["ids"]) != index.ntotal:
            raise ValueError("snapshot inconsistent")
        if not isinstance(index, faiss.IndexIDMap2):
            raise ValueError("snapshot is not an IndexIDMap2")
        self = cls(dimension)
        self.index = index
        self._ids = arrays["ids"].astype(np.int64)
        self._domain = arrays["domain"].astype(np.int32)
        self._success = arrays["success"].astype(np.int8)
        self._task = arrays["task"].astype(np.int32)
        self._n = len(self._ids)
        self._alive = np.ones(self._n, dtype=bool)
        self._pos = {int(i): p for p, i in enumerate(self._ids)}
        stored = faiss.vector_to_array(self.index.id_map)
        if not np.array_equal(np.sort(stored), np.sort(self._ids)):
            raise ValueError("snapshot ids disagree with its filter fields")
        self.domains = _Vocab(meta["domains"])
        self.tasks = _Vocab(meta["tasks"])
        self.watermark = int(meta["watermark"])
        self.deletion_seq = int(meta["deletion_seq"])
        return self


def snapshot_path(data_dir: Path, namespace: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", namespace)
    return data_dir / "index" / f"{safe}.faiss"


def set_threads(n: int) -> None:
    faiss.omp_set_num_threads(n)
