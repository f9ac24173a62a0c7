"""The IVF's search paths of a namespace index: candidates re-ranked exactly from the float32 rows, a site's rows
through its plan (ems_service.index.faiss.sites), and the filters that keep most rows (success, a task left out)
applied to the IVF's candidates.

`IvfSearch` is a part of NamespaceIndex (ems_service.index.faiss.namespace), which holds the rows and fields
declared below and calls these under its lock, in approximate mode only.
"""

from __future__ import annotations

import math

import faiss
import numpy as np

from ems_service.index.base import Hit
from ems_service.index.faiss.approx import ApproxConfig, search_params, selector_for
from ems_service.index.faiss.sites import SitePlan, nearest_lists
from ems_service.index.faiss.vectors import VectorBlocks, inner_products


class IvfSearch:
    """The approximate search paths (the fields are NamespaceIndex's)."""

    approx: ApproxConfig
    ivf: faiss.IndexIVFScalarQuantizer | None
    watermark: int
    _graph_coarse: bool
    _params: dict[tuple[int, int | None], faiss.SearchParametersIVF]
    _ids: np.ndarray
    _success: np.ndarray
    _task: np.ndarray
    _alive: np.ndarray
    _list: np.ndarray
    _centroids: np.ndarray
    _vectors: VectorBlocks
    _n: int
    _pos: dict[int, int]

    def __len__(self) -> int:
        raise NotImplementedError

    def _top(self, scores: np.ndarray, positions: np.ndarray, k: int) -> list[Hit]:
        raise NotImplementedError

    def _positions(self, ids: np.ndarray) -> np.ndarray:
        """The positions of the ids FAISS returned (-1: fewer results than asked for)."""
        return np.array([self._pos[i] for i in ids.tolist() if i >= 0], dtype=np.int64)

    def _rerank(self, q: np.ndarray, positions: np.ndarray, k: int) -> list[Hit]:
        """The best k of the candidates at `positions`, scored exactly from the float32 rows."""
        if positions.size == 0:
            return []
        return self._top(self._vectors.inner_products(q[0], positions), positions, k)

    def _candidates(self, q: np.ndarray, wanted: int, share: float, sel: faiss.IDSelector | None) -> np.ndarray:
        """Positions of the IVF's `wanted` best for `q`. A filter that keeps a share s of the vectors visits 1/s
        times the lists, so about as many allowed vectors are scanned as in an unfiltered query."""
        coarse_ef = self.approx.coarse_ef if self._graph_coarse else None
        nprobe = math.ceil(self.approx.nprobe / share)
        if sel is None:  # reused (searches hold the lock): a SWIG object built per query costs more than the scan
            params = self._params.get((nprobe, coarse_ef))
            if params is None:
                params = self._params[(nprobe, coarse_ef)] = search_params(self.ivf, nprobe, None, coarse_ef)
        else:
            params = search_params(self.ivf, nprobe, sel, coarse_ef)
        _, ids = self.ivf.search(q, min(len(self), wanted), params=params)  # type: ignore[union-attr]  # approximate mode: ivf is set
        return self._positions(ids[0])

    def _search_ivf(self, q: np.ndarray, k: int, allowed: np.ndarray | None) -> list[Hit]:
        """IVF candidates (among the `allowed` positions, through an id selector) re-ranked exactly."""
        sel = keep = None
        if allowed is not None:
            sel, keep = selector_for(self._ids[allowed], self.watermark, len(self), lambda: self._banned(allowed))
        positions = self._candidates(q, k * max(1, self.approx.rerank), 1.0 if allowed is None else
                                     max(1, allowed.size) / len(self), sel)
        del keep
        return self._rerank(q, positions, k)

    def _site_plan(self, allowed: np.ndarray) -> SitePlan:
        """What a search among the `allowed` positions (a site's rows) needs of them: the lists holding them, how
        many each, and the id selector letting them through."""
        counts = np.bincount(self._list[allowed], minlength=self.ivf.nlist)  # type: ignore[union-attr]  # approximate mode
        present = np.flatnonzero(counts)
        sel, keep = selector_for(self._ids[allowed], self.watermark, len(self), lambda: self._banned(allowed))
        return SitePlan(int(allowed.size), present, counts[present], sel, keep)

    def _search_site(self, q: np.ndarray, k: int, plan: SitePlan) -> list[Hit]:
        """IVF search among a site's rows that visits only lists holding some of them, nearest first, until about
        as many allowed vectors are scanned as an unfiltered search scans (at least nprobe lists). A domain keeps a
        few per cent of the rows, and they cluster: scaling nprobe by 1/share instead visited a third of all
        lists at 1M (4 ms)."""
        ivf = self.ivf
        assert ivf is not None
        scores = inner_products(self._centroids, q[0], plan.present)
        order = nearest_lists(scores, plan.counts, self.approx.nprobe * len(self) / ivf.nlist, self.approx.nprobe)
        lists = np.ascontiguousarray(plan.present[order].reshape(1, -1), dtype=np.int64)
        dist = np.ascontiguousarray(scores[order].reshape(1, -1), dtype=np.float32)
        params = search_params(ivf, lists.shape[1], plan.selector)
        wanted = min(plan.size, k * max(1, self.approx.rerank))
        found_d, found = np.empty((1, wanted), dtype=np.float32), np.empty((1, wanted), dtype=np.int64)
        ivf.search_preassigned_c(1, faiss.swig_ptr(q), wanted, faiss.swig_ptr(lists), faiss.swig_ptr(dist),
                                 faiss.swig_ptr(found_d), faiss.swig_ptr(found), False, params)
        positions = self._positions(found[0])
        return self._rerank(q, positions, k)

    def _banned(self, allowed: np.ndarray) -> np.ndarray:
        mask = self._alive[: self._n].copy()
        mask[allowed] = False
        return self._ids[: self._n][mask]

    def _search_ivf_post_filtered(self, q: np.ndarray, k: int, success_code: int | None, task_code: int | None,
                                  share: float) -> list[Hit] | None:
        """A filter that keeps most rows: the IVF's best 1/share times as many candidates, then the filter on
        those (no per-row mask of the whole namespace); None when fewer than k pass (the caller filters first)."""
        positions = self._candidates(q, math.ceil(k * max(1, self.approx.rerank) / share), share, None)
        keep = np.ones(positions.size, dtype=bool)
        if success_code is not None:
            keep &= self._success[positions] == success_code
        if task_code is not None:
            keep &= self._task[positions] != task_code
        if int(keep.sum()) < k:
            return None
        return self._rerank(q, positions[keep], k)

    def _search_ivf_excluding(self, q: np.ndarray, k: int, task_code: int, share: float) -> list[Hit]:
        """IVF candidates of every row but one task's, through a selector of that task's ids: found by one scan of
        the task codes, where a mask of every row and a bitmap over the id range cost 3 ms a search at 1M (the
        query's nearest rows were all runs of the task left out: an agent coached on a task it ran before). A
        task holds few rows, so the selector is small; no index of rows by task is kept (task ids may be as many
        as the rows)."""
        n, ivf = self._n, self.ivf
        assert ivf is not None
        positions = np.flatnonzero((self._task[:n] == task_code) & self._alive[:n])
        banned = faiss.IDSelectorBatch(self._ids[positions])
        sel = faiss.IDSelectorNot(banned)
        # the task's rows fill the nearest lists: visit as many more lists as they would fill on their own
        extra = math.ceil(positions.size * ivf.nlist / max(1, len(self)))
        found = self._candidates(q, k * max(1, self.approx.rerank),
                                 min(share, self.approx.nprobe / (self.approx.nprobe + extra)), sel)
        del sel, banned
        return self._rerank(q, found, k)
