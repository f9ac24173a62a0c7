"""The float32 vectors of one namespace, held once, in blocks that are appended to and never copied on a write.

A snapshot's vectors arrive as one read-only memory-mapped block (the base); rows added later go to tail blocks
allocated as needed (each as large as everything before it, from 4,096 up to 131,072 rows), so a write never copies
what is already held. Before blocks, the first write after a restart from a 1M snapshot copied the 1.5 GB mapping
under the namespace lock (benchmarks/faiss_memory.py). A position is a row's index across the blocks in order.

These rows are the exact index itself (`search`: faiss.knn_inner_product over each block, in place) and the
re-ranking copy of the approximate one (`inner_products` at given positions).
"""

from __future__ import annotations

import faiss
import numpy as np

MIN_BLOCK = 4_096  # rows
MAX_BLOCK = 131_072  # rows (192 MB at 384-d); np.empty leaves a block's untouched pages uncommitted


def inner_products(matrix: np.ndarray, q: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """`matrix[positions] @ q` without gathering the rows first (FAISS reads them in place): 2.4x faster
    than numpy for 5,000 rows of 384-d, measured here."""
    if not (matrix.flags.c_contiguous and matrix.dtype == np.float32):  # read in place: it must be laid out so
        raise TypeError("inner_products needs a C-contiguous float32 matrix")
    positions = np.ascontiguousarray(positions, dtype=np.int64)
    q = np.ascontiguousarray(q, dtype=np.float32)
    out = np.empty(len(positions), dtype=np.float32)
    faiss.fvec_inner_products_by_idx(faiss.swig_ptr(out), faiss.swig_ptr(q), faiss.swig_ptr(matrix),
                                     faiss.swig_ptr(positions), matrix.shape[1], 1, len(positions))
    return out


class VectorBlocks:
    """Rows of float32 vectors in blocks: appended in place, read by position, searched exactly."""

    def __init__(self, dimension: int, base: np.ndarray | None = None) -> None:
        self.dimension = dimension
        self._blocks: list[np.ndarray] = []
        self._starts = np.zeros(0, dtype=np.int64)  # position of each block's first row
        self._n = 0
        if base is not None and len(base):
            if not (base.flags.c_contiguous and base.dtype == np.float32 and base.shape[1:] == (dimension,)):
                raise TypeError("a base block must be a C-contiguous float32 (n, dimension) array")
            self._blocks, self._starts, self._n = [base], np.zeros(1, dtype=np.int64), len(base)

    def __len__(self) -> int:
        return self._n

    @property
    def blocks(self) -> int:
        return len(self._blocks)

    def nbytes(self) -> int:
        """Bytes of the rows in use (a mapped base counts: its pages come into memory as they are read)."""
        return self._n * self.dimension * 4

    def append(self, vectors: np.ndarray) -> None:
        """Add rows at the end; fills the last block, then allocates new ones (nothing held is copied)."""
        done = 0
        while done < len(vectors):
            if not self._blocks or self._n == int(self._starts[-1]) + len(self._blocks[-1]):
                size = min(MAX_BLOCK, max(MIN_BLOCK, self._n))
                self._blocks.append(np.empty((size, self.dimension), dtype=np.float32))
                self._starts = np.append(self._starts, self._n)
            block, at = self._blocks[-1], self._n - int(self._starts[-1])
            take = min(len(vectors) - done, len(block) - at)
            block[at : at + take] = vectors[done : done + take]
            self._n += take
            done += take

    def spans(self) -> list[tuple[int, np.ndarray]]:
        """(first position, rows in use) per block: views of rows that no later append changes."""
        return [(start, block[: self._n - start]) for start, block in zip(self._starts.tolist(), self._blocks,
                                                                            strict=True)]

    def inner_products(self, q: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The inner products of `q` with the rows at `positions`, read in place."""
        if len(self._blocks) == 1:
            return inner_products(self._blocks[0], q, positions)
        which = np.searchsorted(self._starts, positions, side="right") - 1
        out = np.empty(len(positions), dtype=np.float32)
        for b in np.unique(which).tolist():
            here = which == b
            out[here] = inner_products(self._blocks[b], q, positions[here] - self._starts[b])
        return out

    def search(self, q: np.ndarray, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The (at most) k best (scores, positions) of `q` among the rows where `allowed` is set (all when None),
        by exact inner product; unordered across blocks. One faiss.knn_inner_product per block, on its memory."""
        q = np.ascontiguousarray(q.reshape(-1), dtype=np.float32)
        scores, found = [], []
        for start, rows in self.spans():
            sel = keep = None
            if allowed is not None:
                part = allowed[start : start + len(rows)]
                if not part.any():
                    continue
                keep = np.packbits(part, bitorder="little")
                sel = faiss.IDSelectorBitmap(len(rows), faiss.swig_ptr(keep))
            kk = min(k, len(rows))
            dist, pos = np.empty(kk, dtype=np.float32), np.empty(kk, dtype=np.int64)
            faiss.knn_inner_product(faiss.swig_ptr(q), faiss.swig_ptr(rows), self.dimension, 1, len(rows), kk,
                                    faiss.swig_ptr(dist), faiss.swig_ptr(pos), sel)
            del keep
            hit = pos >= 0  # fewer allowed rows than k: the rest stay empty (-1)
            scores.append(dist[hit])
            found.append(pos[hit] + start)
        if not scores:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        return np.concatenate(scores), np.concatenate(found)

    def take(self, keep: np.ndarray | None = None) -> np.ndarray:
        """The rows (where `keep` is set) as one new C-contiguous array."""
        return gather(self.spans(), self.dimension, keep)

    def merge_tail(self, spans: list[tuple[int, np.ndarray]], merged: np.ndarray) -> bool:
        """Replace the blocks `spans` listed (taken by `spans()` and gathered into `merged` off the lock) by one
        block, when no row was added since; returns whether it did."""
        if not spans or self._n != spans[-1][0] + len(spans[-1][1]) or len(merged) != self._n - spans[0][0]:
            return False
        first = int(np.searchsorted(self._starts, spans[0][0]))
        if first + len(spans) != len(self._blocks) or int(self._starts[first]) != spans[0][0]:
            return False
        self._blocks = self._blocks[:first] + [merged]
        self._starts = self._starts[: first + 1].copy()
        return True


def gather(spans: list[tuple[int, np.ndarray]], dimension: int, keep: np.ndarray | None = None) -> np.ndarray:
    """The rows of `spans` (where `keep` is set, indexed by position) as one new C-contiguous array."""
    total = sum(len(rows) if keep is None else int(keep[start : start + len(rows)].sum()) for start, rows in spans)
    out = np.empty((total, dimension), dtype=np.float32)
    at = 0
    for start, rows in spans:
        part = rows if keep is None else rows[keep[start : start + len(rows)]]
        out[at : at + len(part)] = part
        at += len(part)
    return out
