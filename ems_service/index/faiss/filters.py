"""The filter fields' helpers: string <-> small int codes, and the positions of each domain's rows.

A domain filter keeps a few per cent of a namespace (the largest of the dev set's sites: 2.3%); comparing every
row's domain code costs ~1 ms at 1M rows before FAISS is even called, so each domain's positions are kept as they
are added and a domain filter reads only those.
"""

from __future__ import annotations

import numpy as np


class Vocab:
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


class Postings:
    """The positions of the rows of each code (removed rows included until compaction rebuilds it)."""

    def __init__(self) -> None:
        self._arrays: dict[int, np.ndarray] = {}
        self._sizes: dict[int, int] = {}

    @classmethod
    def build(cls, codes: np.ndarray) -> Postings:
        """Postings of rows 0..len(codes)-1."""
        out = cls()
        out.add(codes, 0)
        return out

    def add(self, codes: np.ndarray, first: int) -> None:
        """Rows first, first + 1, ... with these codes."""
        if len(codes) == 1:
            self._append(int(codes[0]), np.array([first], dtype=np.int32))
            return
        order = np.argsort(codes, kind="stable")
        ordered = codes[order]
        edges = np.flatnonzero(np.diff(ordered)) + 1
        for group in np.split(order, edges):
            if len(group):
                self._append(int(codes[group[0]]), (group + first).astype(np.int32))

    def _append(self, code: int, positions: np.ndarray) -> None:
        size = self._sizes.get(code, 0)
        arr = self._arrays.get(code)
        if arr is None or size + len(positions) > len(arr):
            grown = np.empty(max(size + len(positions), 2 * size, 16), dtype=np.int32)
            if arr is not None:
                grown[:size] = arr[:size]
            self._arrays[code] = arr = grown
        arr[size : size + len(positions)] = positions
        self._sizes[code] = size + len(positions)

    def get(self, code: int) -> np.ndarray:
        """The positions of `code`'s rows, ascending (a view: valid until the next add)."""
        arr = self._arrays.get(code)
        return arr[: self._sizes[code]] if arr is not None else np.zeros(0, dtype=np.int32)

    def nbytes(self) -> int:
        return 4 * sum(self._sizes.values())
