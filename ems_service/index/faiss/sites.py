"""Site-filtered IVF search plans: what a search of one site's rows needs that depends on those rows only (the IVF
lists holding them, how many each, the id selector letting them through), kept while the site's rows are unchanged.

An agent of a fleet asks about its own site again and again; building the plan (a count of the site's rows per
list, a bitmap over the id range) was half of such a search at 1M. A plan is dropped when a row of its site is
added or removed, and every plan when positions or lists change (compaction, a new IVF, a snapshot restored).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import faiss
import numpy as np

# (domain code, success code or None, excluded task code or None)
PlanKey = tuple[int, int | None, int | None]


@dataclass(frozen=True)
class SitePlan:
    size: int  # allowed rows
    present: np.ndarray  # the lists holding some of them (int64)
    counts: np.ndarray  # how many each of those lists holds
    selector: faiss.IDSelector
    keep: object  # what the selector points into (must outlive it)


class SitePlans:
    """A bounded LRU of plans by filter, each valid until a row of its site changes. Not locked: the namespace's
    lock is held around every use."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._plans: OrderedDict[PlanKey, tuple[int, SitePlan]] = OrderedDict()
        self._stamps: dict[int, int] = {}  # domain code -> changes seen

    def get(self, key: PlanKey) -> SitePlan | None:
        found = self._plans.get(key)
        if found is None or found[0] != self._stamps.get(key[0], 0):
            return None
        self._plans.move_to_end(key)
        return found[1]

    def put(self, key: PlanKey, plan: SitePlan) -> None:
        if isinstance(plan.selector, faiss.IDSelectorNot):  # "all but these ids": any new row elsewhere passes it
            return
        self._plans[key] = (self._stamps.get(key[0], 0), plan)
        self._plans.move_to_end(key)
        while len(self._plans) > self.size:
            self._plans.popitem(last=False)

    def changed(self, codes: Iterable[int]) -> None:
        """Rows of these domains were added or removed."""
        for code in codes:
            self._stamps[code] = self._stamps.get(code, 0) + 1

    def clear(self) -> None:
        self._plans.clear()


def nearest_lists(scores: np.ndarray, counts: np.ndarray, enough: float, nprobe: int) -> np.ndarray:
    """Indexes into `scores` (the query's similarity to each list holding allowed rows), nearest first, until the
    lists hold `enough` allowed rows (at least `nprobe` lists). Only the nearest few are sorted when a site spans
    many lists (a full sort of 4,096 took longer than the FAISS scan): about twice the lists its mean list size
    says are needed; all of them, sorted, when those fall short."""
    m = len(scores)
    want = max(nprobe, 2 * math.ceil(enough * m / max(1, int(counts.sum()))))
    if want < m:
        top = np.argpartition(-scores, want - 1)[:want]
        order = top[np.argsort(-scores[top])]
        covered = np.cumsum(counts[order])
        if covered[-1] < enough:
            order = np.argsort(-scores)
            covered = np.cumsum(counts[order])
    else:
        order = np.argsort(-scores)
        covered = np.cumsum(counts[order])
    take = max(min(m, nprobe), int(np.searchsorted(covered, enough)) + 1)
    return order[:take]
