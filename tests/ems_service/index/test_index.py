"""FAISS index against numpy brute force, filters, removal and snapshots."""

from __future__ import annotations

import json
import os
import threading

import faiss
import numpy as np
import pytest

from ems_service.errors import DimensionMismatch, SnapshotUnusable
from ems_service.index.base import IndexRow
from ems_service.index.faiss import ApproxConfig, NamespaceIndex, set_threads
from ems_service.index.faiss.snapshot import files as snapshot_files

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
    with pytest.raises(SnapshotUnusable):
        NamespaceIndex.load(path, model="other", dimension=DIM)
    vectors = snapshot_files(path)[1]
    good = vectors.read_bytes()
    vectors.write_bytes(b"garbage" * 10)
    with pytest.raises(SnapshotUnusable):
        NamespaceIndex.load(path, model="m", dimension=DIM)
    vectors.write_bytes(good)
    NamespaceIndex.load(path, model="m", dimension=DIM)
    snapshot_files(path)[3].unlink()
    with pytest.raises(SnapshotUnusable):
        NamespaceIndex.load(path, model="m", dimension=DIM)


@pytest.mark.parametrize("damage", ["no metadata", "old format", "short vectors", "other ids"])
def test_snapshot_parts_are_checked(tmp_path, damage):
    rows, _ = _rows(50)
    index = NamespaceIndex(DIM)
    index.add(rows)
    path = tmp_path / "ns.faiss"
    index.save(path, model="m")
    assert [p.name for p in snapshot_files(path) if p.exists()] == [  # exact mode: no FAISS index to write
        "ns.vectors.npy", "ns.fields.npz", "ns.json"]
    NamespaceIndex.load(path, model="m", dimension=DIM)  # intact
    meta = path.with_suffix(".json")
    if damage == "no metadata":  # a save that stopped half-way leaves no metadata behind
        meta.unlink()
    elif damage == "old format":
        meta.write_text(json.dumps({k: v for k, v in json.loads(meta.read_text()).items() if k != "format"}))
    elif damage == "short vectors":
        np.save(path.with_suffix(".vectors.npy"), np.zeros((49, DIM), dtype=np.float32))
    else:
        other = NamespaceIndex(DIM)
        other.add(_rows(50, seed=1)[0][:49] + [IndexRow(99_999, rows[0].vector, None, None, None)])
        other.save(tmp_path / "other.faiss", model="m")
        (tmp_path / "other.fields.npz").replace(path.with_suffix(".fields.npz"))
    with pytest.raises(SnapshotUnusable):
        NamespaceIndex.load(path, model="m", dimension=DIM)


def test_faiss_threads_apply_in_every_searching_thread():
    """OpenMP's thread count is per thread: request worker threads must get the configured one too."""
    rows, vecs = _rows(100)
    index = NamespaceIndex(DIM)
    index.add(rows)
    seen = {}

    def search() -> None:
        seen["before"] = faiss.omp_get_max_threads()
        index.search(vecs[0], 3)
        seen["after"] = faiss.omp_get_max_threads()

    set_threads(1)
    try:
        worker = threading.Thread(target=search)
        worker.start()
        worker.join()
    finally:
        set_threads(0)
    assert seen["after"] == 1
    if (os.cpu_count() or 1) > 1:
        assert seen["before"] > 1  # a fresh thread starts at OpenMP's default: the search itself applied the setting


def test_numpy_blas_runs_single_threaded_and_faiss_blas_keeps_its_pool():
    """numpy's idle OpenBLAS threads spin after each product and stalled the embedder on 2 cores."""
    from threadpoolctl import threadpool_info

    from ems_service.threads import single_threaded_numpy_blas

    def blas() -> dict[str, int]:
        return {lib["filepath"]: lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    before = blas()
    assert single_threaded_numpy_blas() == 1
    after = blas()
    assert [n for path, n in after.items() if "numpy" in path] == [1]
    assert {p: n for p, n in after.items() if "numpy" not in p} == {p: n for p, n in before.items() if "numpy" not in p}


def test_inner_products_by_position_equal_numpy():
    from ems_service.index.faiss.vectors import inner_products

    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(500, DIM)).astype(np.float32)
    q = rng.normal(size=DIM).astype(np.float32)
    positions = rng.choice(500, 77, replace=False)
    assert np.allclose(inner_products(matrix, q, positions), matrix[positions] @ q, rtol=1e-5, atol=1e-5)
    assert inner_products(matrix, q, np.array([], dtype=np.int64)).shape == (0,)
    with pytest.raises(TypeError, match="C-contiguous float32"):
        inner_products(matrix[:, ::2], q[::2], positions)  # a strided view would be read wrongly in place


# -- approximate mode (IVF-SQ8 + exact re-rank) ---------------------------------------------------------------

def _clustered(n: int, seed: int = 0, dim: int = 64) -> tuple[list[IndexRow], np.ndarray]:
    """Text-like data: a few hundred centres with small perturbations (uniform noise flatters nothing)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(300, dim)).astype(np.float32)
    vecs = centres[rng.integers(0, 300, size=n)] + rng.normal(scale=0.15, size=(n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = [IndexRow(id=5 + 2 * i, vector=vecs[i], domain=f"d{i % 50}.com", success=[True, False, None][i % 3],
                     task_id=f"t{i % 97}") for i in range(n)]
    return rows, vecs


APPROX = ApproxConfig(above=2000, nprobe=16, exact_subset=500)


def _recall(index, rows, queries, k=10, **flt):
    def pred(r):
        return ((flt.get("domain") is None or r.domain == flt["domain"])
                and ("success" not in flt or r.success == flt["success"])
                and ("exclude_task_id" not in flt or r.task_id != flt["exclude_task_id"]))
    found = total = 0
    for q in queries:
        want = {i for _, i in _brute(rows, q, k, pred)}
        got = [h.id for h in index.search(q, k, **flt)]
        assert len(got) == len(set(got)) == min(k, sum(map(pred, rows)))
        found += len(want & set(got))
        total += len(want)
    return found / total


def test_switches_to_ivf_above_threshold_and_keeps_recall():
    rows, vecs = _clustered(6000)
    index = NamespaceIndex(64, APPROX)
    index.add(rows[:1500])
    assert not index.wants_build()
    index.add(rows[1500:])
    assert index.wants_build() and index.kind == "flat"
    index.build_approx()
    assert index.kind == "ivf_sq8" and len(index) == 6000 and not index.wants_build()
    rng = np.random.default_rng(3)
    queries = vecs[rng.choice(6000, 40)] + rng.normal(scale=0.05, size=(40, 64)).astype(np.float32)
    assert _recall(index, rows, queries) >= 0.95
    # a small filtered subset is brute force (exact); a large one goes through the IVF with a selector
    assert _recall(index, rows, queries[:10], domain="d7.com") == 1.0
    assert _recall(index, rows, queries[:10], exclude_task_id="t5") >= 0.95
    assert _recall(index, rows, queries[:10], success=True) >= 0.95


def test_ivf_removal_and_changes_during_a_background_build():
    rows, vecs = _clustered(5000, seed=1)
    index = NamespaceIndex(64, APPROX)
    index.add(rows[:4000])
    thread = index.build_in_background()
    assert thread is not None
    index.add(rows[4000:])  # arrives while the build runs (or just before it swaps in)
    index.remove([r.id for r in rows[:100]])
    index.wait_for_build(timeout=60)
    assert index.kind == "ivf_sq8"
    assert index.ids() == {r.id for r in rows[100:]}
    assert index.ivf.ntotal == len(index) == 4900
    hits = index.search(vecs[4500], 10)
    assert hits[0].id == rows[4500].id
    assert not {r.id for r in rows[:100]} & {h.id for h in index.search(vecs[0], 50)}
    index.remove([rows[4500].id])
    assert rows[4500].id not in {h.id for h in index.search(vecs[4500], 10)}


def test_ivf_snapshot_roundtrip(tmp_path):
    rows, vecs = _clustered(3000, seed=2)
    index = NamespaceIndex(64, APPROX)
    index.add(rows)
    index.build_approx()
    index.remove([rows[1].id])
    path = tmp_path / "big.faiss"
    index.save(path, model="m")
    loaded = NamespaceIndex.load(path, model="m", dimension=64, approx=APPROX)
    assert loaded.kind == "ivf_sq8" and loaded.ids() == index.ids()
    for q in vecs[:20]:
        assert index.search(q, 10) == loaded.search(q, 10)
        assert index.search(q, 5, domain="d3.com") == loaded.search(q, 5, domain="d3.com")
    # the loaded vectors are mapped from the snapshot file: growing, removing and re-saving over it all work
    more, more_vecs = _clustered(50, seed=9)
    more = [IndexRow(r.id + 100_000, r.vector, r.domain, r.success, r.task_id) for r in more]
    loaded.add(more)
    loaded.remove([rows[2].id])
    loaded.save(path, model="m")
    again = NamespaceIndex.load(path, model="m", dimension=64, approx=APPROX)
    assert again.ids() == loaded.ids() and rows[2].id not in again.ids()
    assert again.search(more_vecs[0], 1)[0].id == more[0].id
    assert [p.name for p in snapshot_files(path) if p.exists()] == ["big.faiss", "big.vectors.npy", "big.fields.npz",
                                                                    "big.json"]
    exact = NamespaceIndex(64, APPROX)
    exact.add(rows[2:])
    # exact mode holds each vector once (float32 + 22 bytes of fields + 4 of domain postings); the IVF adds its
    # 8-bit codes and ids
    assert exact.kind == "flat" and exact.nbytes() == len(exact) * (64 * 4 + 22 + 4)
    assert exact.nbytes() < loaded.nbytes() < exact.nbytes() + len(loaded) * (64 + 8) + 2 * loaded.ivf.nlist * 64 * 4


def test_ivf_filters_after_restore_and_compaction(tmp_path):
    """Domain filters read each domain's positions, kept as rows are added and rebuilt on load and compaction;
    filters that keep most rows filter the IVF's candidates: recall holds through all of it."""
    rows, vecs = _clustered(6000, seed=4)
    index = NamespaceIndex(64, APPROX)
    index.add(rows)
    index.build_approx()
    path = tmp_path / "ns.faiss"
    index.save(path, model="m")
    loaded = NamespaceIndex.load(path, model="m", dimension=64, approx=APPROX)
    rng = np.random.default_rng(5)
    queries = vecs[rng.choice(6000, 20)] + rng.normal(scale=0.05, size=(20, 64)).astype(np.float32)
    filters = [{"domain": "d7.com"}, {"domain": "d7.com", "success": True, "exclude_task_id": "t5"},
               {"success": False}, {"exclude_task_id": "t5"}, {"success": True, "exclude_task_id": "t9"}]
    for flt in filters:
        assert _recall(loaded, rows, queries, **flt) >= 0.95, flt
    loaded.remove([r.id for r in rows[:3100]])  # more than half: the rows are compacted, positions change
    assert loaded._n == 2900
    loaded.add(rows[:10])
    live = rows[3100:] + rows[:10]
    for flt in filters:
        assert _recall(loaded, live, queries, **flt) >= 0.95, flt


def test_a_filter_most_rows_pass_but_not_near_the_query_falls_back_to_filtering_first():
    """success=False keeps 96% of the rows, but none of those near the query: the IVF's candidates yield fewer
    than k, so the search filters first and still returns k rows that pass."""
    rows, vecs = _clustered(5000, seed=6)
    near = np.zeros(5000, dtype=bool)
    near[np.argsort(-(vecs @ vecs[0]))[:200]] = True  # more than the 45 candidates the IVF is asked for
    rows = [IndexRow(r.id, r.vector, r.domain, bool(near[i]), r.task_id) for i, r in enumerate(rows)]
    index = NamespaceIndex(64, APPROX)
    index.add(rows)
    index.build_approx()
    got = index.search(vecs[0], 10, success=False)
    assert len(got) == 10 and not any(near[(h.id - 5) // 2] for h in got)
    assert all(abs(h.score - float(vecs[(h.id - 5) // 2] @ vecs[0])) < 1e-5 for h in got)  # re-ranked exactly


def test_leaving_out_the_task_whose_runs_crowd_the_query_finds_the_next_nearest():
    """The coach leaves out the agent's own task; when the query's 200 nearest rows are all runs of that task, the
    IVF's candidates hold none that pass, and the search asks FAISS again through a selector of that task's ids:
    the next nearest rows of other tasks, as brute force finds them, and no row of the task."""
    rows, vecs = _clustered(5000, seed=7)
    near = set(np.argsort(-(vecs @ vecs[0]))[:200].tolist())
    rows = [IndexRow(r.id, r.vector, r.domain, r.success, "own" if i in near else r.task_id)
            for i, r in enumerate(rows)]
    index = NamespaceIndex(64, APPROX)
    index.add(rows)
    index.build_approx()
    index.remove([rows[4000].id])  # a removed row stays out too
    live = [r for r in rows if r.id != rows[4000].id]
    got = index.search(vecs[0], 10, exclude_task_id="own")
    assert len(got) == 10 and all(h.id not in {rows[i].id for i in near} for h in got)
    assert all(abs(h.score - float(vecs[(h.id - 5) // 2] @ vecs[0])) < 1e-5 for h in got)  # re-ranked exactly
    # beyond the crowd the rows lie about equally far (SQ8 codes rank them roughly): the mask over every row that
    # this replaced found 5 of brute force's 10 here, this 6; 32 lists instead of 16 gave both 7
    want = [i for _, i in _brute(live, vecs[0], 10, lambda r: r.task_id != "own")]
    assert len(set(want) & {h.id for h in got}) >= 5
    assert _recall(index, live, vecs[[1, 2, 3]], exclude_task_id="own") >= 0.95


def test_an_id_selector_reads_the_other_ids_only_when_they_may_be_fewer():
    """selector_for asks for the ids outside the allowed set (a mask of every row) only when that set could be the
    smaller one; a small allowed set far below the id range gets a batch of its own ids without it."""
    from ems_service.index.faiss.approx import selector_for

    def no_banned() -> np.ndarray:
        raise AssertionError("the banned ids were read for a small allowed set")

    small = np.arange(0, 1_000_000, 997, dtype=np.int64)[:200]  # 200 ids spread over a million
    sel, _ = selector_for(small, 999_999, 1_000_000, no_banned)
    assert [sel.is_member(int(i)) for i in (small[0], small[-1], 1, 999_999)] == [True, True, False, False]
    spread = np.arange(0, 1_000_000, 80, dtype=np.int64)  # 1/80 of the ids: no bitmap, a batch without the rest
    sel, _ = selector_for(spread, 999_999, 1_000_000, no_banned)
    assert sel.is_member(int(spread[3])) and not sel.is_member(int(spread[3]) + 1)
    asked = []

    def banned() -> np.ndarray:  # the index holds ids 0..15,999; 15,000 of them are let through
        asked.append(1)
        return np.arange(15_000, 16_000, dtype=np.int64)

    sel, keep = selector_for(np.arange(15_000, dtype=np.int64), 10**9, 16_000, banned)
    assert asked and keep is not None  # "all but these 1,000" (IDSelectorNot over a batch)
    assert sel.is_member(14_999) and not sel.is_member(15_500)


def test_a_site_plan_is_reused_until_that_sites_rows_change():
    """A site-filtered IVF search keeps its plan (lists, counts, id selector) for the next search of that site; a row
    added to or removed from the site, or a compaction, drops it, so results always match brute force. Rows of
    other sites leave it in place."""
    rows, vecs = _clustered(6000, seed=4)
    index = NamespaceIndex(64, APPROX)
    index.add(rows)
    index.build_approx()
    rng = np.random.default_rng(5)
    assert sum(r.domain == "d3.com" for r in rows) <= APPROX.exact_subset  # searched by brute force: no plan
    index.search(vecs[0], 10, domain="d3.com")
    assert not index._site_plans._plans
    wide = [IndexRow(r.id, r.vector, "wide.com", r.success, r.task_id) for r in rows[:1500]]  # moved to one site
    index.add(wide)
    current = {r.id: r for r in rows} | {r.id: r for r in wide}
    queries = vecs[rng.choice(1500, 5)] + rng.normal(scale=0.05, size=(5, 64)).astype(np.float32)

    def check() -> None:
        live = list(current.values())
        for q in queries:
            want = [i for _, i in _brute(live, q, 10, lambda r: r.domain == "wide.com")]
            got = [h.id for h in index.search(q, 10, domain="wide.com")]
            assert len(set(want) & set(got)) >= 9

    check()
    plan = index._site_plans.get((index.domains.code("wide.com", add=False), None, None))
    assert plan is not None and plan.size == 1500
    elsewhere = IndexRow(90_001, rows[20].vector, "d9.com", None, None)
    index.add([elsewhere])
    current[elsewhere.id] = elsewhere
    assert index._site_plans.get((index.domains.code("wide.com", add=False), None, None)) is plan
    check()  # served from the kept plan
    twin = IndexRow(90_002, queries[0] / np.linalg.norm(queries[0]), "wide.com", True, "t1")  # the nearest row
    index.add([twin])
    current[twin.id] = twin
    assert index.search(queries[0], 1, domain="wide.com")[0].id == twin.id
    index.remove([twin.id])
    del current[twin.id]
    assert twin.id not in [h.id for h in index.search(queries[0], 10, domain="wide.com")]
    check()
    gone = [r.id for r in wide[:800]]
    index.remove(gone)
    for i in gone:
        del current[i]
    check()
    assert all(h.id not in gone for q in queries for h in index.search(q, 10, domain="wide.com"))


def test_nearest_lists_match_a_full_sort():
    """The partial sort of a site's lists takes the same lists, in the same order, as sorting them all."""
    from ems_service.index.faiss.sites import nearest_lists

    rng = np.random.default_rng(0)
    for m, per in ((4096, 15), (300, 200), (40, 3), (8, 1000)):
        scores = rng.normal(size=m).astype(np.float32)
        counts = rng.integers(1, 2 * per, size=m)
        for enough, nprobe in ((1953.0, 8), (50.0, 8), (float(counts.sum()) + 1, 8), (10.0, 32)):
            order = np.argsort(-scores)
            take = max(min(m, nprobe), int(np.searchsorted(np.cumsum(counts[order]), enough)) + 1)
            assert nearest_lists(scores, counts, enough, nprobe).tolist() == order[:take].tolist()


def test_a_kept_site_plan_lets_no_later_row_of_another_site_through():
    """A large site's plan holds a bitmap of its ids up to the watermark of the day; rows of other sites added
    later carry larger ids and leave that plan in place. FAISS takes the bitmap's length in bytes: given its length
    in bits, it read past the buffer and let some of those rows through as hits of the site."""
    rows, vecs = _clustered(3000)
    rows = [IndexRow(r.id, r.vector, "big.com" if i % 5 == 0 else r.domain, r.success, r.task_id)
            for i, r in enumerate(rows)]
    index = NamespaceIndex(64, APPROX)
    index.add(rows)
    index.build_approx()
    index.search(vecs[0], 10, domain="big.com")
    (plan,) = [p for _, p in index._site_plans._plans.values()]
    assert isinstance(plan.selector, faiss.IDSelectorBitmap)  # the case at stake: a site of 1/5 of the rows
    rng = np.random.default_rng(1)
    first = index.watermark + 1
    later = []
    for j in range(3000):  # ids spread up to ~13x the old watermark, each near a query
        v = vecs[j] + rng.normal(scale=0.01, size=64).astype(np.float32)
        later.append(IndexRow(first + 13 * j, v / np.linalg.norm(v), "other.com", None, None))
    index.add(later)
    assert [p for _, p in index._site_plans._plans.values()] == [plan]  # kept: no row of big.com changed
    big = {r.id for r in rows if r.domain == "big.com"}
    for i in range(0, 3000, 5):
        assert {h.id for h in index.search(vecs[i], 10, domain="big.com")} <= big
