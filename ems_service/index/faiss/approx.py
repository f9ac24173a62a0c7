"""The approximate index (IVF with 8-bit scalar quantization): when to build it, how to train it, and the
OpenMP threads FAISS may use."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

import faiss
import numpy as np

from ems_service.config import IndexSettings
from ems_service.index.faiss.vectors import gather

# faiss compares queries x dimension with this threshold to choose BLAS for flat search; the default (128000)
# keeps batches of up to 333 queries on the slow path (~6x slower measured here). Single queries stay off BLAS.
faiss.cvar.distance_compute_blas_threshold = 3072

_threads = {"n": 0}  # 0: FAISS's default (all cores)
_local = threading.local()


_DEFAULTS = IndexSettings()  # the one place the defaults are declared (EMS_INDEX__*)


@dataclass(frozen=True)
class ApproxConfig:
    """When and how a namespace switches to the approximate index (the settings' defaults; `from_settings`).

    Measured (benchmarks/results/search_sweep.json, 300 real queries, replicated dev vectors): nprobe 8 keeps
    recall@10 at 0.9997 (100k) and 1.0 (1M), 0.996 with a domain filter at 1M, and halves the FAISS call of nprobe
    32 (0.19 vs 0.44 ms at 1M). An HNSW graph over the centroids (`coarse="hnsw"`) trains in half the time at 1M
    (59 vs 110 s) and searches 0.02 ms faster at nprobe 8, but loses recall (0.9987); HNSW over every vector (8-bit,
    M=32) reached only 0.82-0.88 at efSearch 32-64 on these near-duplicate rows; 2 OpenMP threads gain nothing for
    one query. So: a flat coarse quantizer, 4 sqrt(n) lists, nprobe 8."""

    above: int = _DEFAULTS.approx_above  # vectors; 0 disables the approximate index
    nprobe: int = _DEFAULTS.nprobe  # inverted lists visited per query
    rerank: int = _DEFAULTS.rerank  # candidates per wanted hit, re-scored exactly from the float32 copy
    exact_subset: int = _DEFAULTS.exact_subset  # filtered searches over at most this many vectors are brute force
    train_per_list: int = 64  # training sample per inverted list
    train_iterations: int = 10  # k-means iterations (the default 25 costs minutes at 1M for no recall)
    lists_per_root: float = 4.0  # nlist ~ this x sqrt(n)
    max_lists: int = 16384
    coarse: str = "flat"  # "flat": every centroid scored per query; "hnsw": an HNSW graph over the centroids
    coarse_ef: int = 64  # HNSW candidate list for the coarse search (at least nprobe)

    @classmethod
    def from_settings(cls, index: IndexSettings) -> ApproxConfig:
        return cls(above=index.approx_above, nprobe=index.nprobe, rerank=index.rerank,
                   exact_subset=index.exact_subset)

    def nlist(self, n: int) -> int:
        """Inverted lists for n vectors: about `lists_per_root` sqrt(n), a power of two in [64, max_lists]."""
        return int(min(self.max_lists, max(64, 2 ** round(math.log2(max(1.0, self.lists_per_root * math.sqrt(n)))))))


def set_threads(n: int) -> None:
    """OpenMP threads for searches, in every thread that searches (an OpenMP setting is per thread: a
    request's worker thread would otherwise use all cores, 2-2.5x slower for a single query)."""
    _threads["n"] = n
    use_threads()


def use_threads() -> None:
    """Apply the configured thread count to the calling thread (once per thread and setting)."""
    n = _threads["n"]
    if n and getattr(_local, "n", None) != n:
        faiss.omp_set_num_threads(n)
        _local.n = n


def train_ivf(spans: list[tuple[int, np.ndarray]], ids: np.ndarray, alive: np.ndarray,
              config: ApproxConfig) -> tuple[faiss.IndexIVFScalarQuantizer, np.ndarray]:
    """An IVF-SQ8 index (inner product) trained on a sample of the rows (`spans`, as VectorBlocks.spans gives
    them) where `alive` is set, and holding all of those, added block by block (no copy of the whole set); and the
    list each row went to (by position; -1 for the others)."""
    dimension = spans[0][1].shape[1]
    positions = np.flatnonzero(alive)
    nlist = config.nlist(len(positions))
    if config.coarse == "hnsw":
        quantizer = faiss.IndexHNSWFlat(dimension, 32, faiss.METRIC_INNER_PRODUCT)
        quantizer.hnsw.efConstruction = 80
    else:
        quantizer = faiss.IndexFlatIP(dimension)
    ivf = faiss.IndexIVFScalarQuantizer(quantizer, dimension, nlist, faiss.ScalarQuantizer.QT_8bit,
                                        faiss.METRIC_INNER_PRODUCT)
    ivf.cp.niter = config.train_iterations
    ivf.own_fields = True  # the IVF frees its quantizer
    quantizer.this.disown()
    sample = min(len(positions), nlist * config.train_per_list)
    rng = np.random.default_rng(len(positions))
    chosen = np.sort(rng.choice(positions, size=sample, replace=False)) if sample < len(positions) else positions
    keep = np.zeros(len(alive), dtype=bool)
    keep[chosen] = True
    ivf.train(gather(spans, dimension, keep))
    lists = np.full(len(alive), -1, dtype=np.int32)
    for start, rows in spans:
        part = alive[start : start + len(rows)]
        if part.all():
            lists[start : start + len(rows)] = add_assigned(ivf, rows, ids[start : start + len(rows)])
        elif part.any():
            lists[start : start + len(rows)][part] = add_assigned(ivf, rows[part], ids[start : start + len(rows)][part])
    return ivf, lists


def add_assigned(ivf: faiss.IndexIVF, vectors: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Add vectors to the IVF (as add_with_ids does) and return the list each went to."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    lists = np.ascontiguousarray(ivf.quantizer.assign(vectors, 1).reshape(-1), dtype=np.int64)
    ivf.add_core(len(vectors), faiss.swig_ptr(vectors), faiss.swig_ptr(ids), faiss.swig_ptr(lists))
    return lists.astype(np.int32)


def ivf_lists(ivf: faiss.IndexIVF) -> tuple[np.ndarray, np.ndarray]:
    """Every id an IVF index holds and the list it is in (list by list)."""
    invlists = ivf.invlists
    sizes = np.array([invlists.list_size(li) for li in range(ivf.nlist)], dtype=np.int64)
    ids = np.concatenate([np.zeros(0, dtype=np.int64)] + [
        faiss.rev_swig_ptr(invlists.get_ids(li), int(sizes[li])).copy() for li in np.flatnonzero(sizes).tolist()])
    return ids, np.repeat(np.arange(ivf.nlist, dtype=np.int32), sizes)


def centroids(ivf: faiss.IndexIVF) -> np.ndarray:
    """The IVF's list centroids as one float32 array (nlist, d)."""
    return np.ascontiguousarray(ivf.quantizer.reconstruct_n(0, ivf.nlist), dtype=np.float32)


def ivf_ids(ivf: faiss.IndexIVF) -> np.ndarray:
    """Every id an IVF index holds (list by list)."""
    return ivf_lists(ivf)[0]


def has_graph_coarse(ivf: faiss.IndexIVF) -> bool:
    """Whether the IVF's coarse quantizer is an HNSW graph (it then takes an efSearch per query)."""
    return isinstance(faiss.downcast_index(ivf.quantizer), faiss.IndexHNSW)


def search_params(ivf: faiss.IndexIVF, nprobe: int, selector: faiss.IDSelector | None,
                  coarse_ef: int | None = None) -> faiss.SearchParametersIVF:
    """IVF search parameters; `coarse_ef`: the HNSW coarse quantizer's candidate list (None: a flat quantizer)."""
    params = faiss.SearchParametersIVF()
    params.nprobe = min(ivf.nlist, nprobe)
    if selector is not None:
        params.sel = selector
    if coarse_ef is not None:
        coarse = faiss.SearchParametersHNSW()
        coarse.efSearch = max(coarse_ef, params.nprobe)
        params.quantizer_params = coarse
        params.referenced_objects = [coarse]  # the SWIG field holds a bare pointer
    return params


def selector_for(let_through: np.ndarray, watermark: int, held: int,
                 banned: Callable[[], np.ndarray]) -> tuple[faiss.IDSelector, object]:
    """An id selector letting the ids `let_through` pass (`banned()`: the other `held - len(let_through)` ids FAISS
    holds), and what must stay alive while it is used.

    A bitmap over the id range when that is small next to the allowed set (one bit test per scanned vector,
    no hash set to build per query); else the smaller of 'these ids' and 'all but these ids'. `banned()` is asked
    for only when it may be the smaller: it reads a mask of every row, a million at 1M, for each search of a site.
    """
    span = watermark + 1
    if span <= 64 * max(1, let_through.size):
        bits = np.zeros(span, dtype=bool)
        bits[let_through] = True
        packed = np.packbits(bits, bitorder="little")
        # FAISS takes the bitmap's length in bytes: an id past it fails the test (ids added after a kept site plan
        # was built lie past it), and nothing beyond the buffer is read
        return faiss.IDSelectorBitmap(len(packed), faiss.swig_ptr(packed)), packed
    if held - let_through.size >= let_through.size:
        return faiss.IDSelectorBatch(let_through), None
    others = banned()
    if others.size < let_through.size:
        inner = faiss.IDSelectorBatch(others)
        return faiss.IDSelectorNot(inner), inner
    return faiss.IDSelectorBatch(let_through), None
