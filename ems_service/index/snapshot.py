"""Index snapshots: the FAISS index, the float32 vectors (a plain .npy, memory-mapped on reading), the filter
fields and the watermarks, written atomically and checked on reading.

Files beside `<namespace>.faiss`: `.vectors.npy`, `.fields.npz` (ids, domain, success, task) and `.json`
(metadata, written last: a snapshot without it, or with parts that disagree, is not used).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import faiss
import numpy as np

from ems_service.index.approx import ApproxConfig, ivf_ids
from ems_service.index.namespace import NamespaceIndex

FORMAT = 2
FIELDS = ("ids", "domain", "success", "task")


def snapshot_path(data_dir: Path, namespace: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", namespace)
    return data_dir / "index" / f"{safe}.faiss"


def files(path: Path) -> list[Path]:
    """Every file of the snapshot at `path` (the .faiss file first)."""
    return [path, path.with_suffix(".vectors.npy"), path.with_suffix(".fields.npz"), path.with_suffix(".json")]


def _replace(tmp: Path, final: Path) -> None:
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, final)


def save(index: NamespaceIndex, path: Path, *, model: str) -> None:
    """Write index, vectors, fields, then the metadata (each to a temporary file renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    blob, fields, meta = index.snapshot_state()
    meta = {**meta, "model": model, "format": FORMAT}
    faiss_path, vectors_path, fields_path, meta_path = files(path)
    path.with_suffix(".json").unlink(missing_ok=True)  # a half-replaced set is never taken for a snapshot
    tmp = path.with_suffix(".faiss.tmp")
    blob.tofile(tmp)
    _replace(tmp, faiss_path)
    tmp = path.with_suffix(".vectors.tmp.npy")
    np.save(tmp, fields["vectors"])
    _replace(tmp, vectors_path)
    tmp = path.with_suffix(".fields.tmp.npz")
    np.savez(tmp, **{name: fields[name] for name in FIELDS})
    _replace(tmp, fields_path)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(meta))
    _replace(tmp, meta_path)
    path.with_suffix(".npz").unlink(missing_ok=True)  # format 1 kept everything but the index in one .npz


def load(path: Path, *, model: str, dimension: int, approx: ApproxConfig | None = None) -> NamespaceIndex:
    """Read a snapshot; raises ValueError when it is missing, corrupt, of an older format or for another model."""
    faiss_path, vectors_path, fields_path, meta_path = files(path)
    if not all(p.exists() for p in (faiss_path, vectors_path, fields_path, meta_path)):
        raise ValueError("snapshot missing")
    try:
        meta = json.loads(meta_path.read_text())
    except ValueError as exc:
        raise ValueError(f"snapshot metadata unreadable: {exc}") from exc
    if meta.get("format") != FORMAT:
        raise ValueError(f"snapshot format {meta.get('format')} is not {FORMAT}")
    if meta.get("model") != model or meta.get("dimension") != dimension:
        raise ValueError("snapshot was made with another embedding model")
    try:
        index = faiss.read_index(str(faiss_path))
        # mapped, not read: a fresh 1.5 GB allocation at 1M costs seconds here; pages come in as searches
        # touch them, and the first add after start-up copies them into memory as the array grows
        vectors = np.load(vectors_path, mmap_mode="r")
        with np.load(fields_path) as arrays:
            fields = {name: arrays[name] for name in FIELDS}
    except Exception as exc:  # noqa: BLE001 - faiss raises RuntimeError on corrupt files, numpy ValueError/OSError
        raise ValueError(f"snapshot unreadable: {exc}") from exc
    if index.ntotal != meta["ntotal"] or index.d != dimension or len(fields["ids"]) != index.ntotal:
        raise ValueError("snapshot inconsistent")
    if vectors.shape != (index.ntotal, dimension) or vectors.dtype != np.float32:
        raise ValueError("snapshot vectors have the wrong shape")
    if isinstance(index, faiss.IndexIDMap2):
        stored = faiss.vector_to_array(index.id_map)
    elif isinstance(index, faiss.IndexIVFScalarQuantizer):
        stored = ivf_ids(index)
    else:
        raise ValueError(f"snapshot holds an unknown index type {type(index).__name__}")
    if not np.array_equal(np.sort(stored), np.sort(fields["ids"])):
        raise ValueError("snapshot ids disagree with its filter fields")
    out = NamespaceIndex(dimension, approx)
    out.adopt(index, trained_on=int(meta.get("trained_on", index.ntotal)))
    out.restore(vectors=vectors, domains=meta["domains"], tasks=meta["tasks"], **fields)
    out.watermark = int(meta["watermark"])
    out.deletion_seq = int(meta["deletion_seq"])
    return out
