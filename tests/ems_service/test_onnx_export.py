"""The export of the ONNX graphs (`ems_service.onnx_embedder.export`): their agreement with the torch model, eager
attention, the smoothed and selectively quantized MatMuls, the opt-in fully int8 graph, the CPU flags read."""

from __future__ import annotations

import numpy as np
import pytest

from ems_service.errors import EmbedderUnavailable


@pytest.mark.parametrize("graph", ["all-MiniLM-L6-v2.onnx", "all-MiniLM-L6-v2.selective-int8.onnx"])
def test_onnx_graphs_agree_with_torch_on_dev_texts(embedder, tmp_path, graph):
    """Both graphs `make install` exports (fp32 and selective int8) give the torch model's vectors on dev texts the
    export never saw (the shipped agreement texts are a spread sample; these are the files' first lines)."""
    from ems_service.onnx_embedder import OnnxEmbedder, default_path, sibling
    from tests.conftest import dev_records

    onnx = OnnxEmbedder(sibling(default_path(), graph), batch_size=16)
    texts = [r["task"] for r in dev_records("online_mind2web_abp.jsonl", 60)]
    texts += [" ".join(s["action"] for s in r["steps"]) for r in dev_records("webcanvas.jsonl", 20)]
    a, b = onnx.embed(texts), embedder.embed(texts)
    assert a.shape == b.shape and a.dtype == np.float32
    assert float((a * b).sum(axis=1).min()) >= 0.99  # length-sorted batches come back in input order
    assert onnx.name == embedder.name and onnx.dimension == embedder.dimension
    assert onnx.agreement >= 0.99  # what export measured and recorded beside the graph


def test_export_computes_attention_eagerly_without_nan_guards(tmp_path):
    """The export (what `make install` runs) writes attention as the eager BERT computes it: no IsNaN/Where nodes in
    the layers (SDPA's export guards fully masked rows with them in every layer; the mask is built once, before the
    layers). The graph is exported afresh here, not read from the install."""
    import onnx

    from ems_service.embeddings import default_model_path
    from ems_service.onnx_embedder.export import _export_fp32

    _export_fp32(default_model_path(), tmp_path / "m.onnx")
    nodes = onnx.load(str(tmp_path / "m.onnx")).graph.node
    in_layers = [n for n in nodes if "/layer." in n.name]
    assert sum(n.op_type == "Softmax" for n in in_layers) == 6  # one attention per layer
    assert not [n.name for n in in_layers if n.op_type in ("IsNaN", "Where")]



def test_smoothing_leaves_the_fp32_function_and_evens_out_the_input_channels():
    """Smoothing a MatMul (what the selective graph does to three feed-forward down-projections before their
    int8) divides its input per channel and multiplies the weight's rows back: the fp32 graph gives the same
    vectors, and the MatMul's input has its outlier channels flattened (the largest channel maximum over the
    median one, over the agreement texts)."""
    import onnx
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from ems_service.embeddings import default_model_path
    from ems_service.onnx_embedder import agreement_texts, default_path
    from ems_service.onnx_embedder.export import SMOOTHED, _input_maxima, smooth

    model = onnx.load(str(default_path()))
    targets = [n for n in model.graph.node if n.op_type == "MatMul" and any(p in n.name for p in SMOOTHED)]
    assert len(targets) == len(SMOOTHED) == 3
    originals = [n.input[0] for n in targets]
    maxima = _input_maxima(model, originals)
    smooth(model, targets, maxima, 0.75)
    smoothed = [n.input[0] for n in targets]  # the Muls' outputs now
    after = _input_maxima(model, smoothed)
    for original, name in zip(originals, smoothed, strict=True):
        spread_before = maxima[original].max() / np.median(maxima[original])
        assert spread_before > 4  # GELU's outlier channels (measured 4.3-11 on the three)
        assert after[name].max() / np.median(after[name]) < spread_before / 1.8  # measured 2.2-2.6x flatter

    plain = ort.InferenceSession(str(default_path()), providers=["CPUExecutionProvider"])
    evened = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(default_model_path() / "tokenizer.json"))
    for text in agreement_texts()[:8]:
        ids = np.array([tokenizer.encode(text).ids[:256]], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        assert np.allclose(evened.run(None, feed)[0], plain.run(None, feed)[0], atol=1e-5)


def test_the_selective_graph_holds_the_smoothed_down_projections_in_int8(tmp_path):
    """The selective graph, quantized afresh from the fp32 graph as export does, has int8 weights in the smoothed
    MatMuls (one Mul before each) and keeps the value projections and the other down-projections in fp32; a
    layer pattern that names no MatMul is an error, and a failed step leaves no file behind."""
    import onnx

    from ems_service.onnx_embedder import SEL8, default_path
    from ems_service.onnx_embedder.export import _quantize

    _quantize(default_path(), tmp_path / SEL8, selective=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [SEL8]  # no temporary file left
    with pytest.raises(ValueError, match="names 0 MatMuls"):
        _quantize(default_path(), tmp_path / "other.onnx", selective=True, smoothed_layers=("layer.7/output/dense/",))
    assert sorted(p.name for p in tmp_path.iterdir()) == [SEL8]
    nodes = onnx.load(str(tmp_path / SEL8)).graph.node
    int8 = {n.name for n in nodes if n.op_type in ("MatMulInteger", "DynamicQuantizeMatMul")}
    for layer in range(6):
        down = f"/inner/encoder/layer.{layer}/output/dense/MatMul"
        assert any(name.startswith(down) for name in int8) == (layer in (1, 3, 5)), layer
        assert not any(name.startswith(f"/inner/encoder/layer.{layer}/attention/self/value/") for name in int8)
    assert sum(n.op_type == "Mul" and n.name.endswith("/smooth") for n in nodes) == 3


def test_int8_graph_is_opt_in_with_its_measured_agreement(settings, embedder, tmp_path):
    from ems_service.onnx_embedder import OnnxEmbedder, default_path
    from ems_service.onnx_embedder.export import quantize_int8
    from ems_service.runtime import build_embedder
    from tests.conftest import dev_records

    texts = [r["task"] for r in dev_records("webcanvas.jsonl", 40)]
    target = tmp_path / "all-MiniLM-L6-v2.int8.onnx"
    meta = quantize_int8(default_path(), target, texts=texts)
    assert 0.95 <= meta["min_cosine"] <= meta["mean_cosine"] < 1.0  # close, but not the same vectors
    assert meta["probes"] >= 340 and target.with_suffix(".json").exists()  # shipped texts + these 40
    int8 = OnnxEmbedder(target, min_agreement=0.95)
    assert int8.backend == "onnx_int8"
    assert int8.name != embedder.name  # its own vector space: start-up refuses to mix it with stored vectors
    cos = (int8.embed(texts) * embedder.embed(texts)).sum(axis=1)
    assert cos.mean() >= 0.98
    assert build_embedder(settings).backend == "onnx_selective_int8"  # auto never picks the fully int8 graph
    settings.embedder.backend = "onnx_int8"
    settings.embedder.onnx_path = str(target)
    assert build_embedder(settings).backend == "onnx_int8"
    settings.embedder.onnx_path = str(tmp_path / "missing.int8.onnx")
    with pytest.raises(EmbedderUnavailable, match="embedder export --int8"):
        build_embedder(settings)


def test_vnni_is_read_from_the_cpu_flags(tmp_path):
    """Without VNNI, ONNX Runtime's u8s8 MatMul can saturate: the export quantizes the weights unsigned (u8u8). On an
    AVX2-only AMD EPYC the selective graph agreed at 0.986 with signed weights (under 0.99, so the service fell back
    to fp32) and at 0.993 unsigned."""
    from ems_service.onnx_embedder.export import has_vnni

    info = tmp_path / "cpuinfo"
    info.write_text("flags\t\t: fpu sse2 avx avx2 fma\n")
    assert not has_vnni(info)
    info.write_text("flags\t\t: fpu sse2 avx avx2 avx512f avx512_vnni\n")
    assert has_vnni(info)
    info.write_text("flags\t\t: avx2 avx_vnni\n")
    assert has_vnni(info)
    assert not has_vnni(tmp_path / "missing")
