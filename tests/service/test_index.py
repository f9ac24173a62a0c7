"""FAISS index against numpy brute force, filters, removal and snapshots."""

from __future__ import annotations

import numpy as np
import pytest

from ems_service.errors import DimensionMismatch
from ems_service.feed import IndexRow
from ems_service.index import NamespaceIndex

DIM = 32


def _rows(n: int, seed: int = 0) -> tuple[list[IndexRow], np.ndarray]:
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    domains = ["a.com", "b.com", "c.com", None]
    rows = [
        IndexRow(id=10 + 3 * i, vector=vecs[i], domain=domains[i % 4], success=[True, False, None][i % 3],
                 task_id=f"t{i % 7}")
        for i in range(n)
    ]
    return rows, vecs


def _brute(rows, query, k, pred=lambda r: True):
    scored = [(float(r.vector @ query), r.id) for r in rows if pred(r)]
    scored.sort(key=lambda x: (-x[0], x[1]))
    return scored[:k]


@pytest.mark.parametrize("flt", [
    {},
    {"domain": "a.com"},
    {"success": True},
    {"success": False, "domain": "b.com"},
    {"exclude_task_id": "t3"},
    {"domain": "zzz.com"},
])
def test_topk_equals_brute_force(flt):
    rows, _ = _rows(500)
    index = NamespaceIndex(DIM)
    index.add(rows)
    rng = np.random.default_rng(1)

    def pred(r):
        return ((flt.get("domain") is None or r.domain == flt["domain"])
                and ("success" not in flt or r.success == flt["success"])
                and ("exclude_task_id" not in flt or r.task_id != flt["exclude_task_id"]))

    for _ in range(20):
        q = rng.normal(size=DIM).astype(np.float32)
        q /= np.linalg.norm(q)
        got = index.search(q, 10, **flt)
        want = _brute(rows, q, 10, pred)
        assert [h.id for h in got] == [i for _, i in want]
        assert np.allclose([h.score for h in got], [s for s, _ in want], atol=1e-5)


def test_remove_and_readd():
    rows, vecs = _rows(100)
    index = NamespaceIndex(DIM)
    index.add(rows)
    gone = [r.id for r in rows[:40]]
    assert index.remove(gone + [999_999]) == 40
    assert len(index) == 60 and index.ids() == {r.id for r in rows[40:]}
    hits = index.search(vecs[0], 100)
    assert not set(gone) & {h.id for h in hits}
    index.add(rows[:5])
    assert len(index) == 65
    assert index.search(vecs[0], 1)[0].id == rows[0].id


def test_compaction_keeps_filters_right():
    rows, vecs = _rows(3000)
    index = NamespaceIndex(DIM)
    index.add(rows)
    index.remove([r.id for r in rows[:2000]])
    rest = rows[2000:]
    q = vecs[2500]
    got = index.search(q, 5, domain="a.com")
    assert [h.id for h in got] == [i for _, i in _brute(rest, q, 5, lambda r: r.domain == "a.com")]


def test_dimension_mismatch_is_an_error():
    index = NamespaceIndex(DIM)
    with pytest.raises(DimensionMismatch):
        index.add([IndexRow(1, np.ones(DIM + 1, dtype=np.float32), None, None, None)])
    with pytest.raises(DimensionMismatch):
        index.search(np.ones(DIM + 1, dtype=np.float32), 3)


def test_snapshot_roundtrip_and_corruption(tmp_path):
    rows, vecs = _rows(200)
    index = NamespaceIndex(DIM)
    index.add(rows)
    index.remove([rows[0].id])
    index.deletion_seq = 7
    path = tmp_path / "ns.faiss"
    index.save(path, model="m")
    loaded = NamespaceIndex.load(path, model="m", dimension=DIM)
    assert loaded.ids() == index.ids() and loaded.watermark == index.watermark and loaded.deletion_seq == 7
    assert [h.id for h in loaded.search(vecs[3], 5, domain="b.com")] == [h.id for h in index.search(vecs[3], 5, domain="b.com")]
    with pytest.raises(ValueError):
        NamespaceIndex.load(path, model="other", dimension=DIM)
    path.write_bytes(b"garbage" * 10)
    with pytest.raises(ValueError):
        NamespaceIndex.load(path, model="m", dimension=DIM)
    path.unlink()
    with pytest.raises(ValueError):
        NamespaceIndex.load(path, model="m", dimension=DIM)
