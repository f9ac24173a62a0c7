"""ONNX Runtime backend for MiniLM, the home of onnxruntime and of the one-time export from torch.

- `graphs`: the graphs' names and places, and the agreement with the torch model each must reach (>= 0.99: the
  service uses a graph only then, the faster one first).
- `export`: the export from torch and the quantization (`webcoach embedder export`, run by `make install` and the
  Dockerfile).
- `runtime`: `OnnxEmbedder`, the service's embedder on those graphs, and `load`, which picks the graph.
"""

from ems_service.onnx_embedder.graphs import (
    BACKENDS,
    FP32,
    INT8,
    MIN_AGREEMENT,
    SEL8,
    agreement,
    agreement_texts,
    default_path,
    int8_path,
    sibling,
)
from ems_service.onnx_embedder.runtime import OnnxEmbedder, load, load_int8

__all__ = ["BACKENDS", "FP32", "INT8", "MIN_AGREEMENT", "SEL8", "OnnxEmbedder", "agreement", "agreement_texts",
           "default_path", "int8_path", "load", "load_int8", "sibling"]
