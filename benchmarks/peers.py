"""Peers on the same data in the same run: Chroma (PersistentClient), Qdrant (local mode), mem0 OSS (FAISS store,
local HuggingFace embedder, infer=False). Optional: `pip install -e .[bench]`; a peer that is not installed is
reported as skipped.

Ingest: episodes/s on the webcanvas dev texts, each peer given vectors from the same embedder as this service
(mem0 only takes its own sentence-transformers embedder: the same MiniLM model, torch backend). Search: p50/p95
of top-10 by vector at 10k and 100k replicated dev vectors (benchmarks.data); mem0 searches by text. A size a
peer cannot load within `budget_s` is skipped and says so.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import tempfile
import time
import uuid
from collections.abc import Callable

import numpy as np

from benchmarks.common import percentiles
from benchmarks.data import REPLICATED, DevVectors, replicate
from ems_service.embeddings import Embedder, default_model_path


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


def run(embedder: Embedder, dev: DevVectors, texts: list[str], *, sizes: tuple[int, ...] = (10_000, 100_000),
        budget_s: float = 600.0, log=print) -> dict:
    """Every installed peer: ingest rate on `texts`, search latency at `sizes`."""
    out: dict = {"data": REPLICATED, "budget_s": budget_s, "peers": {}}
    queries = dev.queries[:200]
    for cls, module in ((Chroma, "chromadb"), (Qdrant, "qdrant_client")):
        if not available(module):
            out["peers"][cls.name] = {"skipped": f"{module} is not installed (pip install -e .[bench])"}
            continue
        peer, result = cls(), {"search": {}}
        t = time.perf_counter()
        for i in range(0, len(texts), 64):
            chunk = texts[i : i + 64]
            peer.add(embedder.embed(chunk), chunk)
        result["ingest_eps"] = round(len(texts) / (time.perf_counter() - t), 1)
        for n in sizes:
            fresh = cls()
            t = time.perf_counter()
            vectors = replicate(dev.vectors, n, seed=n)
            for i in range(0, n, 10_000):
                fresh.add(vectors[i : i + 10_000])
                if time.perf_counter() - t > budget_s:
                    break
            load_s = time.perf_counter() - t
            if fresh.n < n:
                result["search"][str(n)] = {"skipped": f"loading stopped at {fresh.n:,} after {load_s:.0f}s"}
                continue
            result["search"][str(n)] = {"load_s": round(load_s, 1), **_timed(fresh.search, list(queries))}
            del fresh, vectors
        out["peers"][cls.name] = result
        log(f"peer {cls.name} done")
    if not available("mem0"):
        out["peers"]["mem0"] = {"skipped": "mem0ai is not installed (pip install -e .[bench])"}
        return out
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
    out["peers"]["mem0"] = result
    log("peer mem0 done")
    return out
