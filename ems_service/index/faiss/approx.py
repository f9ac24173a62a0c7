"""The approximate index (IVF with 8-bit scalar quantization): when to build it, how to train it, and the
OpenMP threads FAISS may use."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import faiss
import numpy as np

from ems_service.config import IndexSettings

# faiss compares queries x dimension with this threshold to choose BLAS for flat search; the default (128000)
# keeps batches of up to 333 queries on the slow path (~6x slower measured here). Single queries stay off BLAS.
faiss.cvar.distance_compute_blas_threshold = 3072

_threads = {"n": 0}  # 0: FAISS's default (all cores)
_local = threading.local()


_DEFAULTS = IndexSettings()  # the one place the defaults are declared (EMS_INDEX__*)


@dataclass(frozen=True)
class ApproxConfig:
    """When and how a namespace switches to the approximate index (the settings' defaults; `from_settings`)."""

    above: int = _DEFAULTS.approx_above  # vectors; 0 disables the approximate index
    nprobe: int = _DEFAULTS.nprobe  # inverted lists visited per query
    rerank: int = _DEFAULTS.rerank  # candidates per wanted hit, re-scored exactly from the float32 copy
    exact_subset: int = _DEFAULTS.exact_subset  # filtered searches over at most this many vectors are brute force
    train_per_list: int = 64  # training sample per inverted list
    train_iterations: int = 10  # k-means iterations (the default 25 costs minutes at 1M for no recall)

    @classmethod
    def from_settings(cls, index: IndexSettings) -> ApproxConfig:
        return cls(above=index.approx_above, nprobe=index.nprobe, rerank=index.rerank,
                   exact_subset=index.exact_subset)

    def nlist(self, n: int) -> int:
        """Inverted lists for n vectors: about 4 sqrt(n), a power of two in [64, 16384]."""
        return int(min(16384, max(64, 2 ** round(math.log2(max(1.0, 4 * math.sqrt(n)))))))


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


def train_ivf(vectors: np.ndarray, ids: np.ndarray, config: ApproxConfig) -> faiss.IndexIVFScalarQuantizer:
    """An IVF-SQ8 index (inner product) trained on a sample of `vectors` and holding all of them."""
    dimension = vectors.shape[1]
    nlist = config.nlist(len(ids))
    quantizer = faiss.IndexFlatIP(dimension)
    ivf = faiss.IndexIVFScalarQuantizer(quantizer, dimension, nlist, faiss.ScalarQuantizer.QT_8bit,
                                        faiss.METRIC_INNER_PRODUCT)
    ivf.cp.niter = config.train_iterations
    ivf.own_fields = True  # the IVF frees its quantizer
    quantizer.this.disown()
    sample = min(len(ids), nlist * config.train_per_list)
    rng = np.random.default_rng(len(ids))
    train = vectors[rng.choice(len(ids), size=sample, replace=False)] if sample < len(ids) else vectors
    ivf.train(train)
    ivf.add_with_ids(vectors, ids)
    return ivf


def ivf_ids(ivf: faiss.IndexIVF) -> np.ndarray:
    """Every id an IVF index holds (list by list)."""
    invlists = ivf.invlists
    return np.concatenate([np.zeros(0, dtype=np.int64)] + [
        faiss.rev_swig_ptr(invlists.get_ids(li), invlists.list_size(li)).copy()
        for li in range(ivf.nlist) if invlists.list_size(li)])


def search_params(ivf: faiss.IndexIVF, nprobe: int, selector: faiss.IDSelector | None) -> faiss.SearchParametersIVF:
    params = faiss.SearchParametersIVF()
    params.nprobe = min(ivf.nlist, nprobe)
    if selector is not None:
        params.sel = selector
    return params


def selector_for(ids: np.ndarray, allowed: np.ndarray, alive: np.ndarray,
                 watermark: int) -> tuple[faiss.IDSelector, object]:
    """An id selector letting the ids where `allowed` is set through (`alive`: the rows FAISS holds), and what
    must stay alive while it is used.

    A bitmap over the id range when that is small next to the allowed set (one bit test per scanned vector,
    no hash set to build per query); else the smaller of 'these ids' and 'all but these ids'.
    """
    let_through = ids[allowed]
    span = watermark + 1
    if span <= 64 * max(1, let_through.size):
        bits = np.zeros(span, dtype=bool)
        bits[let_through] = True
        packed = np.packbits(bits, bitorder="little")
        return faiss.IDSelectorBitmap(span, faiss.swig_ptr(packed)), packed
    banned = ids[alive & ~allowed]
    if banned.size < let_through.size:
        inner = faiss.IDSelectorBatch(banned)
        return faiss.IDSelectorNot(inner), inner
    return faiss.IDSelectorBatch(let_through), None
