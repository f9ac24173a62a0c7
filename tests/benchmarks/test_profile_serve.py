"""`python -m benchmarks.profile_serve`: a served load's py-spy samples put in the stages of the request path."""

from __future__ import annotations

import pytest

from benchmarks import profile_serve

_RAW = "\n".join([
    # the model under the batcher under the coach route: the embedder, not the route
    "process 1;thread (0x1);run (uvicorn/server.py:10);coach (ems_service/routes/coaching.py:40);"
    "embed (ems_service/batcher.py:80);_run (ems_service/onnx_embedder/runtime.py:130);run (onnxruntime/session.py:200) 30",
    # pydantic inside redaction counts as redaction (a project stage beats a framework)
    "process 1;thread (0x2);ingest (ems_service/ingest.py:80);redact_texts (condenser/redact.py:110);"
    "model_copy (pydantic/main.py:300) 10",
    # a framework frame alone: its framework
    "process 1;thread (0x3);run (uvicorn/server.py:10);validate (pydantic/main.py:500) 5",
    "process 1;thread (0x4);<module> (somewhere.py:1) 5",
    "not a stack line",
])


def test_summary_puts_each_sample_in_the_deepest_stage_of_its_stack():
    out = profile_serve.summarize(_RAW)
    assert out["samples"] == 50
    assert out["stage_share"] == {"embedder: model and tokenizer": 0.6, "redaction": 0.2,
                                  "pydantic (validation, serialization)": 0.1, "other": 0.1}
    assert out["top_self"][0] == {"function": "run (onnxruntime/session.py:200)", "share": 0.6}


def test_profile_of_a_real_served_coach_load():
    out = profile_serve.run("coach16", 6)
    assert out["samples"] > 100 and out["driven"]["requests"] >= 400 and out["driven"]["throughput_rps"] > 0
    assert sum(out["stage_share"].values()) == pytest.approx(1.0, abs=0.01)
    # a coaching load embeds every query: the model is a large share of the server's samples
    assert out["stage_share"]["embedder: model and tokenizer"] > 0.2
    assert "coaching: retrieval, risk, words" in out["stage_share"]
