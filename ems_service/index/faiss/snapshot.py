"""Index snapshots: the float32 vectors (a plain .npy, memory-mapped on reading), the filter fields, the IVF index
when there is one, and the watermarks, written atomically and checked on reading.

Files: `<name>.vectors.npy`, `<name>.fields.npz` (ids, domain, success, task, list), `<name>.faiss` (the serialized IVF;
only in approximate mode) and `<name>.json` (the manifest: metadata and a checksum of every other file, written
last; a snapshot without it, with a part whose checksum differs, or with parts that disagree, is not used: the
index is rebuilt from the stored vectors).

Format 6 adds each row's IVF list to the fields (a start no longer walks the IVF's lists to find them); format 5's
checksums are XXH3-128 (format 4: CRC-32); from format 4 on, exact mode holds each vector once: no FAISS index, no
`.faiss` file. Formats 3 to 5 still load, each checked by its own checksums (3 and 4: CRC-32): a format-3 exact
snapshot's `.faiss` (an IndexIDMap2(IndexFlatIP), a second copy of the vectors) is checked and dropped, and the
next snapshot is written as format 6. Older formats are rebuilt from the stored vectors. `<name>` is the namespace
itself when it is lower-case letters, digits, '_' and '-', else '_' and a hash of it, so two namespaces never share
a file (not on a case-insensitive file system either), and a name never carries a dot that would read as a suffix.

Why a fast keyless hash and not SHA-256: the manifest lies beside the files it vouches for, so whoever can rewrite
a part can rewrite its checksum too; the checksum only has to catch damage (a 4 KB overwrite inside a .faiss loaded
silently and gave similarities of 3e37). Every byte of a snapshot (1.9 GB at 1M episodes) is checked at each start,
so its speed is start-up time: XXH3-128 (the `xxhash` package) runs several times as fast as zlib's CRC-32, which
formats 3-4 used, and SHA-256 slower still (`python -m benchmarks.faiss_memory` times the three).
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import re
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO

import faiss
import numpy as np
import xxhash

from ems_service.errors import SnapshotUnusable
from ems_service.index.faiss.approx import ApproxConfig, ivf_lists
from ems_service.index.faiss.namespace import NamespaceIndex

FORMAT = 6  # 3: checksums in the manifest; 4: no .faiss in exact mode; 5: XXH3-128 checksums; 6: IVF lists
READS = (3, 4, 5, 6)
DIGEST = "xxh3_128"  # the manifest's key for the checksums this version writes
_DIGEST_OF = {3: "crc32", 4: "crc32", 5: DIGEST, 6: DIGEST}  # the checksums each format read carries
FIELDS = ("ids", "domain", "success", "task", "list")  # "list" from format 6 on
PARTS = ("faiss", "vectors", "fields")  # "faiss" only in approximate mode from format 4
_PLAIN = re.compile(r"[a-z0-9][a-z0-9_-]{0,127}")
_CHUNK = 1 << 24


def snapshot_path(data_dir: Path, namespace: str) -> Path:
    """`<data_dir>/index/<name>.faiss`, one name per namespace (see the module docstring)."""
    name = namespace if _PLAIN.fullmatch(namespace) else "_" + hashlib.sha256(
        namespace.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return data_dir / "index" / f"{name}.faiss"


def files(path: Path) -> list[Path]:
    """Every file a snapshot at `path` may have (the .faiss file first, the manifest last)."""
    stem = path.name.removesuffix(".faiss")
    return [path] + [path.with_name(stem + suffix) for suffix in (".vectors.npy", ".fields.npz", ".json")]


class _Digest:
    """A running checksum of one kind: "xxh3_128" (a hex string, what FORMAT writes) or "crc32" (an int, formats
    3-4)."""

    def __init__(self, kind: str = DIGEST) -> None:
        self.crc, self.xxh = 0, xxhash.xxh3_128() if kind == DIGEST else None

    def update(self, data: bytes | memoryview) -> None:
        if self.xxh is not None:
            self.xxh.update(data)
        else:
            self.crc = zlib.crc32(data, self.crc)

    def value(self) -> str | int:
        return self.xxh.hexdigest() if self.xxh is not None else self.crc


class _Checksummed:
    """A file object that keeps the checksum of everything written through it."""

    def __init__(self, f: BinaryIO) -> None:
        self.f, self.digest = f, _Digest()

    def write(self, data: bytes | memoryview) -> int:
        self.digest.update(data)
        return self.f.write(data)


def digest_of(path: Path, kind: str = DIGEST) -> str | int:
    """The checksum of a file, hashed in 16 MB chunks of a read-only mapping: the pages are hashed where the page
    cache holds them, not copied into a buffer first (half the time over a 1.5 GB vectors file)."""
    digest = _Digest(kind)
    with open(path, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:  # an empty file cannot be mapped
            return digest.value()
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            if hasattr(mapped, "madvise"):  # not on Windows
                mapped.madvise(mmap.MADV_SEQUENTIAL)
            view = memoryview(mapped)
            try:
                for start in range(0, size, _CHUNK):
                    digest.update(view[start : start + _CHUNK])
            finally:
                view.release()
    return digest.value()


def crc_of(path: Path) -> int:
    """CRC-32 of a file (the checksum of formats 3-4)."""
    return int(digest_of(path, "crc32"))


def _write(final: Path, write, *, streamed: bool = True) -> str | int:  # noqa: ANN001 - a callable taking the file
    """Write a part to a temporary file through `write(f)`, fsync, rename into place; its checksum, taken as the
    bytes go out (`streamed`), or read back for writers that seek back (a zip rewrites its headers)."""
    tmp = final.with_name(final.name + ".tmp")
    with open(tmp, "wb") as raw:
        f = _Checksummed(raw)
        write(f if streamed else raw)
        raw.flush()
        os.fsync(raw.fileno())
    digest = f.digest.value() if streamed else digest_of(tmp)
    os.replace(tmp, final)
    return digest


def _write_vectors(f: _Checksummed, blocks: list[np.ndarray], dimension: int) -> None:
    """One .npy of the blocks' rows in order, written block by block (never gathered into one array)."""
    rows = sum(len(b) for b in blocks)
    np.lib.format.write_array_header_1_0(f, {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)),
                                             "fortran_order": False, "shape": (rows, dimension)})
    for block in blocks:
        f.write(memoryview(np.ascontiguousarray(block, dtype=np.float32)))  # type: ignore[arg-type]  # ndarray: a buffer (as below)


def save(index: NamespaceIndex, path: Path, *, model: str) -> None:
    """Write the IVF (if any), vectors, fields, then the manifest with their checksums (each part to a temporary
    file renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    blob, fields, vectors, meta = index.snapshot_state()
    faiss_path, vectors_path, fields_path, meta_path = files(path)
    meta_path.unlink(missing_ok=True)  # a half-replaced set is never taken for a snapshot
    checksums = {
        "vectors": _write(vectors_path, lambda f: _write_vectors(f, vectors, index.dimension)),
        "fields": _write(fields_path, lambda f: np.savez(f, **{name: fields[name] for name in FIELDS}), streamed=False),  # type: ignore[arg-type]  # FIELDS never names savez's allow_pickle
    }
    if blob is not None:
        checksums["faiss"] = _write(faiss_path, lambda f: f.write(memoryview(np.ascontiguousarray(blob))))  # type: ignore[arg-type]  # numpy's stubs: ndarray is a buffer from Python 3.12 on (it is on 3.11 too)
    meta = {**meta, "model": model, "format": FORMAT, DIGEST: checksums}
    tmp = meta_path.with_name(meta_path.name + ".tmp")
    tmp.write_text(json.dumps(meta))
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, meta_path)
    if blob is None:
        faiss_path.unlink(missing_ok=True)  # an older snapshot's index: the manifest no longer names it
    path.with_name(path.name.removesuffix(".faiss") + ".npz").unlink(missing_ok=True)  # format 1's one .npz


def load(path: Path, *, model: str, dimension: int, approx: ApproxConfig | None = None) -> NamespaceIndex:
    """Read a snapshot; raises SnapshotUnusable when it is missing, damaged (a checksum differs), of a format it
    does not read or for another model."""
    faiss_path, vectors_path, fields_path, meta_path = files(path)
    if not all(p.exists() for p in (vectors_path, fields_path, meta_path)):
        raise SnapshotUnusable("snapshot missing")
    try:
        meta = json.loads(meta_path.read_text())
    except ValueError as exc:
        raise SnapshotUnusable(f"snapshot metadata unreadable: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") not in READS:
        raise SnapshotUnusable(f"snapshot format {meta.get('format') if isinstance(meta, dict) else None} is not "
                               f"one of {READS}")
    if meta.get("model") != model or meta.get("dimension") != dimension:
        raise SnapshotUnusable("snapshot was made with another embedding model")
    kind = _DIGEST_OF[meta["format"]]
    expected = meta.get(kind)
    has_index = meta["format"] == 3 or meta.get("kind") != "flat"
    if not isinstance(expected, dict) or set(expected) != set(PARTS if has_index else PARTS[1:]):
        raise SnapshotUnusable("snapshot manifest has no checksums")
    try:
        # three things at once (hashing and FAISS release the GIL): the vectors (the largest part) are checked on
        # one thread; the FAISS file is checked, then read by FAISS itself on another (one copy into its lists:
        # reading the bytes into a buffer and deserializing that took three at 1M, 1 s); the fields are taken
        # over on this one. A file whose checksum differs is never handed to FAISS (it reads the path again:
        # nothing else writes a namespace's snapshot while this process opens it).
        with ThreadPoolExecutor(2) as pool:
            vectors_digest = pool.submit(digest_of, vectors_path, kind)
            if has_index and digest_of(faiss_path, kind) != expected["faiss"]:
                raise SnapshotUnusable("snapshot .faiss file is damaged (checksum mismatch)")
            if digest_of(fields_path, kind) != expected["fields"]:
                raise SnapshotUnusable("snapshot .fields.npz file is damaged (checksum mismatch)")
            reading = pool.submit(faiss.read_index, str(faiss_path)) if has_index else None
            out, lists, trained_on = _restore(vectors_path, fields_path, meta, dimension=dimension, approx=approx)
            try:
                index = reading.result() if reading is not None else None
            except Exception as exc:  # FAISS refuses what it cannot parse (RuntimeError), or cannot allocate
                raise SnapshotUnusable(f"snapshot unreadable: {exc}") from exc
            if vectors_digest.result() != expected["vectors"]:
                raise SnapshotUnusable("snapshot .vectors.npy file is damaged (checksum mismatch)")
    except OSError as exc:
        raise SnapshotUnusable(f"snapshot unreadable: {exc}") from exc
    return _adopt(out, index, lists, dimension=dimension, trained_on=trained_on)


def _restore(vectors_path: Path, fields_path: Path, meta: dict, *, dimension: int,
             approx: ApproxConfig | None) -> tuple[NamespaceIndex, np.ndarray | None, int]:
    """A NamespaceIndex holding the snapshot's rows (no IVF yet), each row's IVF list when the fields carry them
    (format 6) and how many vectors the IVF was trained on, after checking that the parts agree in shape."""
    try:
        # mapped, not read: a fresh 1.5 GB allocation at 1M costs seconds here; pages come in as searches touch
        # them, and rows added later go to new blocks (the mapping is never copied)
        vectors = np.load(vectors_path, mmap_mode="r")
        with np.load(fields_path) as arrays:
            fields = {name: arrays[name] for name in FIELDS if name in arrays.files}
    except Exception as exc:  # numpy raises ValueError/OSError on a file it cannot parse
        raise SnapshotUnusable(f"snapshot unreadable: {exc}") from exc
    try:
        ntotal = int(meta["ntotal"])
        if len(fields["ids"]) != ntotal:
            raise SnapshotUnusable("snapshot inconsistent")
        if vectors.shape != (ntotal, dimension) or vectors.dtype != np.float32:
            raise SnapshotUnusable("snapshot vectors have the wrong shape")
        lists = fields.pop("list", None)
        if lists is not None and lists.shape != (ntotal,):
            raise SnapshotUnusable("snapshot list of each row has the wrong shape")
        out = NamespaceIndex(dimension, approx)
        out.restore(vectors=vectors, domains=meta["domains"], tasks=meta["tasks"], **fields)
        if len(out) != ntotal:  # restore keys rows by id: one id twice leaves fewer
            raise SnapshotUnusable("snapshot ids repeat")
        out.watermark = int(meta["watermark"])
        out.deletion_seq = int(meta["deletion_seq"])
        trained_on = int(meta.get("trained_on", ntotal))
    except (KeyError, TypeError, ValueError) as exc:  # a manifest or fields written by hand or by another version
        raise SnapshotUnusable(f"snapshot incomplete: {exc!r}") from exc
    return out, lists, trained_on


def _adopt(out: NamespaceIndex, index: faiss.Index | None, lists: np.ndarray | None, *, dimension: int,
           trained_on: int) -> NamespaceIndex:
    """`out` serving from the snapshot's FAISS index (if any), after checking that it holds the same rows."""
    ntotal = len(out)
    ids = out.ids_by_position()
    if index is not None and (index.ntotal != ntotal or index.d != dimension):
        raise SnapshotUnusable("snapshot inconsistent")
    ivf = None
    if isinstance(index, faiss.IndexIDMap2):  # format 3, exact mode: its second copy of the vectors is dropped
        stored = faiss.vector_to_array(index.id_map)
        if not np.array_equal(np.sort(stored), np.sort(ids)):
            raise SnapshotUnusable("snapshot ids disagree with its filter fields")
    elif isinstance(index, faiss.IndexIVFScalarQuantizer):
        ivf = index
        in_ivf, ivf_list = ivf_lists(ivf)
        if lists is None:  # formats 3-5: each row's list, from the IVF's lists
            order = np.argsort(ids)
            at = np.searchsorted(ids, in_ivf, sorter=order).clip(max=ntotal - 1)
            covered = np.zeros(ntotal, dtype=bool)
            covered[order[at]] = True
            if not np.array_equal(ids[order[at]], in_ivf) or not covered.all():
                raise SnapshotUnusable("snapshot ids disagree with its filter fields")
            lists = np.zeros(ntotal, dtype=np.int32)
            lists[order[at]] = ivf_list
        elif not _same_lists(ids, lists, in_ivf, ivf_list, ivf.nlist):
            raise SnapshotUnusable("snapshot ids disagree with its filter fields")
    elif index is not None:
        raise SnapshotUnusable(f"snapshot holds an unknown index type {type(index).__name__}")
    out.adopt(ivf, trained_on=trained_on, lists=lists if ivf is not None else None)
    return out


def _same_lists(ids: np.ndarray, lists: np.ndarray, in_ivf: np.ndarray, ivf_list: np.ndarray, nlist: int) -> bool:
    """Whether every IVF list holds the rows the fields assign it: the same count and the same sums of a 64-bit mix
    of the ids, per list, on both sides (one pass each: sorting both sets of a million ids took longer than
    reading the index). Plain sums of ids would take {1, 4} for {2, 3}; the mix (splitmix64's finalizer) makes two
    different sets agree only by chance, in three 21-bit parts so that float64 sums stay exact."""
    if lists.size and (lists.min() < 0 or lists.max() >= nlist):
        return False
    if not np.array_equal(np.bincount(lists, minlength=nlist), np.bincount(ivf_list, minlength=nlist)):
        return False
    mine, theirs = _mix(ids), _mix(in_ivf)
    mask = np.uint64((1 << 21) - 1)
    for shift in (0, 21, 42):
        a = ((mine >> np.uint64(shift)) & mask).astype(np.float64)
        b = ((theirs >> np.uint64(shift)) & mask).astype(np.float64)
        if not np.array_equal(np.bincount(lists, weights=a, minlength=nlist),
                              np.bincount(ivf_list, weights=b, minlength=nlist)):
            return False
    return True


def _mix(ids: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer over int64 ids (wrapping uint64 arithmetic)."""
    z = ids.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))
