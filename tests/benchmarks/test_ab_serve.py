"""`python -m benchmarks.ab_serve`: one turn of a served tree, with the mixed load when asked."""

from __future__ import annotations

from benchmarks import ab_serve, scale
from benchmarks.common import ROOT


def test_a_turn_measures_the_coach_and_search_and_with_mixed_seconds_the_mixed_load(embedder, tmp_path):
    scale.seed(tmp_path, embedder)
    texts, coach = scale.workload(limit_runs=40)
    search = [{"text": t, "k": 5} for t in texts]
    plain = ab_serve._serve(tmp_path, ROOT, coach, search, {})
    assert set(plain) == {*ab_serve.MEASURES, "errors"} and plain["errors"] == 0
    mixed = ab_serve._serve(tmp_path, ROOT, coach, search, {}, mixed_seconds=3, seed=1)
    assert set(mixed) == {*ab_serve.MEASURES, *ab_serve.MIXED, "errors"} and mixed["errors"] == 0
    assert mixed["mixed_calls_s_32"] > 0 and mixed["mixed_p99_ms_32"] > 0
    assert all(mixed[m] > 0 for m in ab_serve.MEASURES)
