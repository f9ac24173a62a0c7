"""How the FAISS backend holds vectors: once, in blocks that writes never copy (a snapshot's mapped vectors stay
mapped after the first write), searched exactly in place; snapshots of formats 3 to 5 still load."""

from __future__ import annotations

import json
import zlib

import faiss
import numpy as np
import pytest

from ems_service.errors import SnapshotUnusable
from ems_service.index.base import IndexRow
from ems_service.index.faiss import ApproxConfig, NamespaceIndex
from ems_service.index.faiss.snapshot import DIGEST, FORMAT, crc_of, digest_of
from ems_service.index.faiss.snapshot import files as snapshot_files
from ems_service.index.faiss.vectors import MIN_BLOCK

DIM = 16
DOMAINS = ["a.com", "b.com", "c.com", None]


def _rows(n: int, *, seed: int = 0, first_id: int = 1) -> list[IndexRow]:
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return [IndexRow(first_id + 2 * i, vecs[i], DOMAINS[i % 4], [True, False, None][i % 3], f"t{i % 7}")
            for i in range(n)]


def _brute(rows: list[IndexRow], q: np.ndarray, k: int, domain: str | None = None) -> list[int]:
    keep = [r for r in rows if domain is None or r.domain == domain]
    scores = np.stack([r.vector for r in keep]) @ q
    order = np.lexsort((np.array([r.id for r in keep]), -scores))
    return [keep[i].id for i in order[:k]]


def _queries(n: int, seed: int = 5) -> np.ndarray:
    q = np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_exact_search_over_blocks_equals_brute_force_before_and_after_merging():
    """Rows across five blocks (batches straddle their edges), some removed: exact top-k, filtered or not, equals
    numpy; merging the tail blocks (maintenance) changes no answer."""
    rows = _rows(4 * MIN_BLOCK + 1500)
    index = NamespaceIndex(DIM, ApproxConfig(above=0, exact_subset=100))
    for start in range(0, len(rows), 777):
        index.add(rows[start : start + 777])
    assert index._vectors.blocks == 4
    index.add(_rows(4 * MIN_BLOCK, seed=1, first_id=10**6))  # fills the fourth block and starts a fifth
    rows += _rows(4 * MIN_BLOCK, seed=1, first_id=10**6)
    gone = {r.id for r in rows[::9]}
    index.remove(sorted(gone))
    live = [r for r in rows if r.id not in gone]
    assert index._vectors.blocks == 5 and len(index) == len(live)
    queries = _queries(15)
    want = {(i, d): _brute(live, q, 10, d) for i, q in enumerate(queries) for d in (None, "b.com")}
    vector = {r.id: r.vector for r in live}
    for merged in (False, True):
        if merged:
            assert index.consolidate()
            assert index._vectors.blocks == 2 and not index.consolidate()
        for (i, d), ids in want.items():
            hits = index.search(queries[i], 10, domain=d)
            assert [h.id for h in hits] == ids
            assert all(abs(h.score - float(vector[h.id] @ queries[i])) < 1e-5 for h in hits)
    index.add(_rows(10, seed=2, first_id=10**7))  # appending after a merge starts a new block
    assert index._vectors.blocks == 3 and index.search(_rows(10, seed=2)[3].vector, 1)[0].id == 10**7 + 6


def test_the_first_write_after_a_restore_copies_nothing(tmp_path):
    """A snapshot's vectors stay the mapped file after writes: new rows go to a new block (before, the first add
    copied every mapped vector into memory under the namespace lock)."""
    rows = _rows(3000)
    index = NamespaceIndex(DIM)
    index.add(rows)
    path = tmp_path / "ns.faiss"
    index.save(path, model="m")
    loaded = NamespaceIndex.load(path, model="m", dimension=DIM)
    (start, mapped), = loaded._vectors.spans()
    assert isinstance(mapped.base, np.memmap) or isinstance(mapped, np.memmap)
    assert not mapped.flags.writeable
    ids_before = loaded._ids
    more = _rows(50, seed=3, first_id=10**6)
    loaded.add(more[:1])
    loaded.add(more[1:])
    spans = loaded._vectors.spans()
    assert len(spans) == 2 and np.shares_memory(spans[0][1], mapped)
    assert loaded._ids is ids_before  # the filter fields had room for these writes as well
    assert loaded.search(more[7].vector, 1)[0].id == more[7].id
    assert loaded.search(rows[7].vector, 1)[0].id == rows[7].id
    assert loaded.nbytes() == len(loaded) * (DIM * 4 + 22 + 4)


def _write_format_3(path, index: NamespaceIndex, rows: list[IndexRow]) -> None:
    """What format 3 wrote for an exact index: an IndexIDMap2(IndexFlatIP) holding the vectors a second time."""
    index.save(path, model="m")
    faiss_path, vectors_path, fields_path, meta_path = snapshot_files(path)
    flat = faiss.IndexIDMap2(faiss.IndexFlatIP(DIM))
    flat.add_with_ids(np.stack([r.vector for r in rows]), np.array([r.id for r in rows], dtype=np.int64))
    blob = faiss.serialize_index(flat)
    faiss_path.write_bytes(blob.tobytes())
    meta = json.loads(meta_path.read_text())
    meta["format"] = 3
    meta["crc32"] = {"faiss": zlib.crc32(blob.tobytes()), "vectors": crc_of(vectors_path),
                     "fields": crc_of(fields_path)}
    meta_path.write_text(json.dumps(meta))


def _with_crc32(path, fmt: int) -> None:
    """The manifest as formats 3 and 4 wrote it for the same parts: CRC-32 checksums under "crc32"."""
    faiss_path, vectors_path, fields_path, meta_path = snapshot_files(path)
    meta = json.loads(meta_path.read_text())
    sums = {"vectors": crc_of(vectors_path), "fields": crc_of(fields_path)}
    if faiss_path.exists():
        sums["faiss"] = crc_of(faiss_path)
    meta_path.write_text(json.dumps({**{k: v for k, v in meta.items() if k != DIGEST}, "format": fmt,
                                     "crc32": sums}))


def _without_lists(path) -> None:
    """The fields as formats 3-5 wrote them: no IVF list per row (found from the IVF's lists on loading)."""
    _, _, fields_path, meta_path = snapshot_files(path)
    with np.load(fields_path) as arrays:
        kept = {name: arrays[name] for name in arrays.files if name != "list"}
    np.savez(fields_path, **kept)
    _redigest(path, "fields")
    meta_path.write_text(json.dumps(json.loads(meta_path.read_text()) | {"format": 5}))


@pytest.mark.parametrize(("kind", "fmt"), [("flat", 3), ("ivf", 3), ("flat", 4), ("ivf", 4), ("flat", 5),
                                           ("ivf", 5)])
def test_older_formats_still_load_and_are_rewritten_as_the_current_one(tmp_path, kind, fmt):
    """Formats 3 to 5 (3 and 4: CRC-32 checksums, format 3 kept a second copy of an exact index's vectors; none held
    the rows' IVF lists) load, checked by their own checksums, and the next save writes the current format."""
    rows = _rows(2500)
    approx = ApproxConfig(above=1000, nprobe=8, exact_subset=0)
    index = NamespaceIndex(DIM, approx if kind == "ivf" else None)
    index.add(rows)
    path = tmp_path / "ns.faiss"
    if kind == "flat" and fmt == 3:
        _write_format_3(path, index, rows)
    else:
        if kind == "ivf":
            index.build_approx()
        index.save(path, model="m")  # the parts did not change from format 3: the lists, checksums and number did
        _without_lists(path)
        if fmt < 5:
            _with_crc32(path, fmt)
    loaded = NamespaceIndex.load(path, model="m", dimension=DIM, approx=approx if kind == "ivf" else None)
    assert loaded.kind == ("ivf_sq8" if kind == "ivf" else "flat") and loaded.ids() == index.ids()
    for q in _queries(10):
        assert loaded.search(q, 10) == index.search(q, 10)
    loaded.save(path, model="m")
    meta = json.loads(snapshot_files(path)[3].read_text())
    assert meta["format"] == FORMAT == 6 and snapshot_files(path)[0].exists() == (kind == "ivf")
    assert "crc32" not in meta and all(len(v) == 32 for v in meta[DIGEST].values())  # 128-bit hex digests
    again = NamespaceIndex.load(path, model="m", dimension=DIM, approx=approx if kind == "ivf" else None)
    assert again.ids() == index.ids()
    if kind == "ivf":  # the lists the old formats were read with are the ones the new one stores
        assert np.array_equal(again._list[: again._n], loaded._list[: loaded._n])
        assert np.array_equal(again._list[: again._n], index._list[: index._n])
        for q in _queries(10):
            assert again.search(q, 10, domain="a.com") == index.search(q, 10, domain="a.com")
    _with_crc32(path, fmt)  # a CRC-32 manifest whose vectors part was damaged afterwards is refused
    with open(snapshot_files(path)[1], "r+b") as f:
        f.seek(-100, 2)
        f.write(b"\x7f" * 8)
    with pytest.raises(SnapshotUnusable):
        NamespaceIndex.load(path, model="m", dimension=DIM, approx=approx if kind == "ivf" else None)


def test_a_format_4_exact_snapshot_must_not_name_a_faiss_part(tmp_path):
    """An exact snapshot lists vectors and fields only; a manifest that also vouches for an index is refused."""
    index = NamespaceIndex(DIM)
    index.add(_rows(100))
    path = tmp_path / "ns.faiss"
    index.save(path, model="m")
    meta_path = snapshot_files(path)[3]
    meta = json.loads(meta_path.read_text())
    assert set(meta[DIGEST]) == {"vectors", "fields"} and meta["kind"] == "flat"
    meta_path.write_text(json.dumps(meta | {DIGEST: meta[DIGEST] | {"faiss": "0" * 32}}))
    with pytest.raises(SnapshotUnusable):
        NamespaceIndex.load(path, model="m", dimension=DIM)
    meta_path.write_text(json.dumps(meta | {"kind": "ivf_sq8"}))  # an IVF without its index file
    with pytest.raises(SnapshotUnusable):
        NamespaceIndex.load(path, model="m", dimension=DIM)


IVF_APPROX = ApproxConfig(above=1000, nprobe=8, exact_subset=0)


def _ivf_snapshot(tmp_path) -> tuple[list[IndexRow], NamespaceIndex, object]:
    """2,500 rows in an IVF index, saved: the rows, the index and the snapshot's path."""
    rows = _rows(2500)
    index = NamespaceIndex(DIM, IVF_APPROX)
    index.add(rows)
    index.build_approx()
    path = tmp_path / "ns.faiss"
    index.save(path, model="m")
    return rows, index, path


def _redigest(path, part: str) -> None:
    """Write the manifest's checksum of a part rewritten on purpose (damage a checksum would not see)."""
    faiss_path, _, fields_path, meta_path = snapshot_files(path)
    meta = json.loads(meta_path.read_text())
    meta[DIGEST][part] = digest_of(faiss_path if part == "faiss" else fields_path)
    meta_path.write_text(json.dumps(meta))


@pytest.mark.parametrize("damage", ["moved", "swapped", "out of range", "short"])
def test_a_snapshot_whose_row_lists_disagree_with_its_ivf_is_refused(tmp_path, damage):
    """Format 6 stores each row's IVF list; lists that do not match what the IVF holds (a writer's bug under a valid
    checksum) are refused rather than served, and the index is then rebuilt from the stored vectors."""
    _, index, path = _ivf_snapshot(tmp_path)
    fields_path = snapshot_files(path)[2]
    with np.load(fields_path) as arrays:
        fields = {name: arrays[name] for name in arrays.files}
    lists = fields["list"]
    if damage == "moved":  # one row said to be in another list
        lists[3] = (lists[3] + 1) % index.ivf.nlist
    elif damage == "swapped":  # two rows of different lists exchange them: every list keeps its count
        other = int(np.flatnonzero(lists != lists[3])[0])
        lists[3], lists[other] = lists[other], lists[3]
    elif damage == "out of range":
        lists[3] = index.ivf.nlist
    else:
        fields["list"] = lists[:-1]
    np.savez(fields_path, **fields)
    _redigest(path, "fields")
    with pytest.raises(SnapshotUnusable):
        NamespaceIndex.load(path, model="m", dimension=DIM, approx=IVF_APPROX)


def test_the_lists_check_tells_apart_sets_with_equal_counts_and_sums():
    """Per-list counts and plain sums of ids would take {1, 4} | {2, 3} for {2, 3} | {1, 4}, or {1, 3} for {2, 2}."""
    from ems_service.index.faiss.snapshot import _same_lists

    ids, lists = np.array([1, 4, 2, 3]), np.array([0, 0, 1, 1])
    assert _same_lists(ids, lists, np.array([4, 1, 3, 2]), np.array([0, 0, 1, 1]), 2)  # same sets, any order
    assert not _same_lists(ids, lists, np.array([2, 3, 1, 4]), np.array([0, 0, 1, 1]), 2)
    assert not _same_lists(np.array([1, 3]), np.array([0, 0]), np.array([2, 2]), np.array([0, 0]), 1)


def test_an_old_format_ivf_that_misses_a_row_is_refused(tmp_path):
    """Formats 3-5 find each row's list in the IVF: an IVF holding one id twice and another not at all (as many
    entries as rows) would leave a row in no list, never found; it is refused."""
    rows, index, path = _ivf_snapshot(tmp_path)
    _without_lists(path)
    NamespaceIndex.load(path, model="m", dimension=DIM, approx=IVF_APPROX)  # intact as format 5
    ivf = index.ivf
    ivf.remove_ids(np.array([rows[0].id], dtype=np.int64))
    ivf.add_with_ids(rows[1].vector.reshape(1, -1), np.array([rows[1].id], dtype=np.int64))
    faiss.write_index(ivf, str(snapshot_files(path)[0]))
    _redigest(path, "faiss")
    with pytest.raises(SnapshotUnusable):
        NamespaceIndex.load(path, model="m", dimension=DIM, approx=IVF_APPROX)
