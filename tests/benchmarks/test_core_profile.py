"""`python -m benchmarks.core --profile-ingest`: where the service's ingest spends its time, by stage."""

from __future__ import annotations

from benchmarks.core import ingest_profile


def test_ingest_profile_splits_the_service_ingest_into_its_stages(embedder):
    out = ingest_profile(embedder, "webcanvas.jsonl")
    stages = out["stages_s"]
    assert out["episodes"] > 300 and out["raw_embedder_s"] > 0
    assert {"embed", "condense", "condense: redaction", "lessons learned", "rows inserted", "index add"} <= set(stages)
    assert 0 < stages["condense: redaction"] <= stages["condense"]  # redaction is a part of condensing
    assert sum(v for k, v in stages.items() if not k.startswith("condense:")) <= out["service_s_profiled"]
