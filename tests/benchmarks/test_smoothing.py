"""`python -m benchmarks.smoothing`: trial exports of the selective graph, each measured against torch."""

from __future__ import annotations

import pytest

from benchmarks import smoothing
from ems_service.onnx_embedder import agreement_texts


def test_a_trial_exports_a_graph_measures_it_and_removes_it(embedder, tmp_path):
    assert smoothing._layers("0.6:1,3") == (0.6, ("layer.1/output/dense/", "layer.3/output/dense/"))
    assert smoothing._layers("0.75:") == (0.75, ())
    for bad in ("1,3,5", "0.75", "1.5:1", "0.75:6", "x:1"):
        with pytest.raises(ValueError, match="strength"):
            smoothing._layers(bad)
    texts = agreement_texts()[:12] + ["Book a table for two in Boston", "Search flights from Paris to Rome"]
    reference = embedder.embed(texts)
    row = smoothing.trial("0.75:1,3,5", tmp_path, reference, texts[-2:], texts, 12)
    assert row["layers"] == ["layer.1", "layer.3", "layer.5"] and row["strength"] == 0.75
    assert row["smoothing_muls"] == 3  # the trial's graph was smoothed as asked, not only labelled
    assert 0.99 <= row["agreement_min"] <= row["agreement_mean"] <= 1.0
    assert 0.99 <= row["dev_min"] <= row["dev_mean"] <= 1.0
    assert row["single_p50_ms"] > 0 and not list(tmp_path.iterdir())  # the trial graph is gone
