"""Damaged snapshots and hostile namespace names: every damaged part of a snapshot is caught by its checksum and
the index is rebuilt from the stored vectors (SQLite and PostgreSQL); a namespace is the whole string or nothing,
and no two namespaces share a snapshot file."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ems_service import Runtime
from ems_service.cli import app as cli
from ems_service.errors import BadRequest, SnapshotUnusable
from ems_service.index.base import IndexRow
from ems_service.index.faiss import NamespaceIndex, snapshot_path
from ems_service.index.faiss.snapshot import files
from ems_service.keys import check_namespace

DIM = 16


def _rows(n: int, seed: int = 0) -> list[IndexRow]:
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return [IndexRow(i + 1, vecs[i], "a.com", True, None) for i in range(n)]


def _damages(size: int) -> list[tuple[str, object]]:
    """(name, how) for one file of `size` bytes: 4 KB overwrites (random, zeros, 0x7f bytes = floats of 3e38)
    at the start, the middle and the end, one flipped byte at several places, truncation and extension."""
    out: list[tuple[str, object]] = []
    block = min(4096, size // 2)
    for where, offset in (("start", 0), ("header end", 128), ("middle", size // 2 - block // 2),
                          ("end", size - block)):
        for fill in ("random", "zeros", "0x7f"):
            out.append((f"4 KB {fill} at {where}", ("overwrite", max(0, offset), block, fill)))
    for offset in sorted({1, 100, size // 3, size // 2, size - 2}):
        out.append((f"flip byte {offset}", ("flip", offset)))
    out += [("truncated by 1", ("truncate", size - 1)), ("truncated to half", ("truncate", size // 2)),
            ("one byte appended", ("append", b"\x00")), ("emptied", ("truncate", 0))]
    return out


def _apply(path: Path, how: tuple) -> None:
    data = bytearray(path.read_bytes())
    kind = how[0]
    if kind == "overwrite":
        _, offset, n, fill = how
        rng = np.random.default_rng(offset)
        block = {"random": rng.bytes(n), "zeros": bytes(n), "0x7f": b"\x7f" * n}[fill]
        if block == bytes(data[offset:offset + n]):
            block = bytes(b ^ 0xFF for b in block)
        data[offset:offset + n] = block
    elif kind == "flip":
        data[how[1]] ^= 0x01
    elif kind == "truncate":
        del data[how[1]:]
    else:
        data += how[1]
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("kind", ["flat", "ivf"])
def test_every_damaged_part_is_refused(tmp_path, kind):
    """Each part (.faiss of an IVF, .vectors.npy, .fields.npz) x each damage: load raises SnapshotUnusable (never a
    silent load)."""
    from ems_service.index.faiss import ApproxConfig

    approx = ApproxConfig(above=200, nprobe=4, rerank=2, exact_subset=0) if kind == "ivf" else None
    index = NamespaceIndex(DIM, approx)
    index.add(_rows(400))
    if kind == "ivf":
        index.build_approx()
        assert index.kind == "ivf_sq8"
    original = tmp_path / "orig" / "ns.faiss"
    index.save(original, model="m")
    NamespaceIndex.load(original, model="m", dimension=DIM)  # intact
    failures, n = [], 0
    parts = [p for p in files(original)[:3] if p.exists()]
    assert len(parts) == (3 if kind == "ivf" else 2)  # exact mode writes no FAISS index
    for part in parts:
        for name, how in _damages(part.stat().st_size):
            work = tmp_path / f"case{n}"
            shutil.copytree(original.parent, work)
            _apply(work / part.name, how)
            n += 1
            try:
                NamespaceIndex.load(work / original.name, model="m", dimension=DIM)
                failures.append((part.name, name))
            except SnapshotUnusable:
                pass
            shutil.rmtree(work)
    assert not failures, failures
    assert n >= 20 * len(parts)


def test_a_manifest_without_checksums_is_not_trusted(tmp_path):
    import json

    from ems_service.index.faiss.snapshot import DIGEST

    index = NamespaceIndex(DIM)
    index.add(_rows(50))
    path = tmp_path / "ns.faiss"
    index.save(path, model="m")
    meta_path = files(path)[3]
    meta = json.loads(meta_path.read_text())
    sums = meta[DIGEST]
    for broken in ({k: v for k, v in meta.items() if k != DIGEST}, meta | {DIGEST: {"faiss": 1}},
                   meta | {DIGEST: "x"}, {k: v for k, v in meta.items() if k != "ntotal"}, [meta],
                   meta | {DIGEST: sums | {"vectors": "0" * 32}},  # a checksum that does not match
                   # the checksums under another format's key: each format is read with its own kind only
                   {**{k: v for k, v in meta.items() if k != DIGEST}, "crc32": sums}):
        meta_path.write_text(json.dumps(broken))
        with pytest.raises(SnapshotUnusable):
            NamespaceIndex.load(path, model="m", dimension=DIM)


@pytest.mark.faiss
def test_a_damaged_snapshot_is_rebuilt_from_stored_vectors(settings, embedder):
    """The reported case end to end: 4 KB of 0x7f inside the .vectors.npy and the .fields.npz (inside a .faiss it
    gave similarities of 3e37 before): the runtime notices, rebuilds from the table, and search scores stay
    cosines."""
    settings.coach.refit_every = 0
    tasks = [f"Buy item number {i} on shop.example.com" for i in range(40)]
    rt = Runtime(settings, embedder=embedder).start(background=False)
    from condenser import Trajectory

    rt.ingest.ingest(namespace="default", trajectories=[Trajectory.model_validate(
        {"task": t, "start_url": "https://shop.example.com/", "steps": [{"action": f"click('#b{i}')"}]})
        for i, t in enumerate(tasks)])
    rt.close()
    for part in (1, 2):
        path = files(snapshot_path(settings.data_dir, "default"))[part]
        _apply(path, ("overwrite", path.stat().st_size // 2, 4096, "0x7f"))
        rt = Runtime(settings, embedder=embedder).start(background=False)
        try:
            assert rt.vectors.last_start["default"] == "rebuilt from stored vectors"
            hits = rt.retrieval.search(namespace="default", text=tasks[7], k=5)
            assert hits[0].episode.task == tasks[7]
            assert all(-1.0001 <= h.similarity <= 1.0001 for h in hits)
        finally:
            rt.close()
    rt = Runtime(settings, embedder=embedder).start(background=False)  # the rebuilt index was saved intact
    try:
        assert rt.vectors.last_start["default"].startswith("snapshot")
    finally:
        rt.close()


BAD_NAMESPACES = ["fleet-a\n", "fleet-a\r\n", "fleet-a\r", "fleet-a ", " fleet-a", "fleet-a\t", "fleet\na",
                  "fleet-a\x0b", "fleet-a\x0c", "fleet-a\u2028", "fleet-a\u0085", "fleet-a\x00", "fleet/a", "../a",
                  ".a", "-a", "_a", "a" * 129, "", "flëet", "fleet a", "fleet:a", "fleet\\a", "fleet%0a",
                  "fleet-a\u200b", "ﬂeet", "fleet-ａ", "\nfleet-a", "fleet-a\n\n"]


def test_a_namespace_is_the_whole_string(client):
    """`$` matched before a trailing newline: every variant of a name with something extra is refused, by the
    key ring, the admin route and the CLI."""
    rt = client.app.state.runtime
    for bad in BAD_NAMESPACES:
        with pytest.raises(BadRequest):
            check_namespace(bad)
        with pytest.raises(BadRequest):
            rt.keys.create(namespace=bad)
        if "\x00" not in bad:
            r = client.post("/v1/admin/keys", json={"namespace": bad})
            assert r.status_code in (400, 413, 422) and r.json()["error"] in ("BadRequest", "LimitExceeded",
                                                                               "ValidationFailed"), (bad, r.text)
    assert rt.keys.list() == []
    runner = CliRunner()
    r = runner.invoke(cli, ["keys", "create", "--namespace", "fleet-a\n"], env={"EMS_DATABASE_URL": rt.db.url})
    assert r.exit_code == 2 and "namespace must be" in r.output


NAMESPACES = ["a", "A", "a.fields", "a.vectors", "a.json", "a.npz", "a_", "a-", "a.faiss", "a.vectors.npy", "Fleet",
              "fleet", "FLEET", "a.b", "a_b", "a-b", "x" * 128, "X" * 128, "default", "Default"]


def test_no_two_namespaces_share_a_snapshot_file(tmp_path):
    """Names that collided before (case, dots read as suffixes, the old '_' substitution): distinct files, even
    on a case-insensitive file system, and saving one never touches another's."""
    for ns in NAMESPACES:
        check_namespace(ns)
    names = [p.name.lower() for ns in NAMESPACES for p in files(snapshot_path(tmp_path, ns))]
    assert len(names) == len(set(names)) == 4 * len(NAMESPACES)
    for i, ns in enumerate(NAMESPACES):
        index = NamespaceIndex(DIM)
        index.add(_rows(5 + i, seed=i))
        index.save(snapshot_path(tmp_path, ns), model="m")
    for i, ns in enumerate(NAMESPACES):
        loaded = NamespaceIndex.load(snapshot_path(tmp_path, ns), model="m", dimension=DIM)
        assert len(loaded) == 5 + i, ns
