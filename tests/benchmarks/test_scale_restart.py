"""benchmarks.scale's restart: one start from stored vectors, then an odd number from the snapshot, the median
reported with every run's ready time in run order."""

from __future__ import annotations

import pytest

from benchmarks import scale


def test_the_median_start_is_reported_with_every_run_in_order(tmp_path, monkeypatch):
    ready = iter([20.0, 0.9, 0.5, 0.7])  # the cold start, then three from the snapshot
    monkeypatch.setattr(scale, "_probe", lambda work: {"ready_s": next(ready), "how": "probe"})
    out = scale.restart(tmp_path)
    assert out["from_stored_vectors"]["ready_s"] == 20.0
    assert out["from_snapshot"]["ready_s"] == 0.7 and out["from_snapshot"]["ready_s_runs"] == [0.9, 0.5, 0.7]


@pytest.mark.parametrize("runs", [0, 2])
def test_an_even_count_of_runs_is_refused_before_any_probe(tmp_path, monkeypatch, runs):
    monkeypatch.setattr(scale, "_probe", lambda work: pytest.fail("probed"))
    with pytest.raises(ValueError, match="odd"):
        scale.restart(tmp_path, warm_runs=runs)
