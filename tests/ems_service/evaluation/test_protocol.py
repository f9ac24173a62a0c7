"""The evaluation protocol: the leakage rule, determinism, the report's keys (real embedder and FAISS)."""

from __future__ import annotations

import json

import pytest

from condenser import Trajectory
from ems_service.evaluation import EvalConfig, evaluate
from ems_service.evaluation.protocol import _Memory, _Vectors, load_items, task_key
from ems_service.evaluation.report import write
from tests.conftest import dev_records

HEADLINE = {"p1_domain", "p5_domain", "mrr_domain", "p5_family", "auc_t3", "auc_t5", "auc_t10", "auc_t5_seed",
            "auc_t5_no_memory", "brier_t5", "next_action_coverage", "next_action_precision",
            "next_action_precision_frequency", "intervene_precision", "intervene_recall", "healthy_interrupted",
            "auc_t5_served", "advice_internals", "advice_grounded", "advice_foreign", "advice_most_common",
            "advice_distinct", "advice_with_action_or_error", "looping_warned", "scroll_repeats_interrupted",
            "walls_named", "advice_healthy_interrupted", "template_p5_webarena", "episodes", "tasks", "seconds"}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("evaldata")
    wc = root / "wc.jsonl"
    wc.write_text("\n".join(json.dumps(r) for r in dev_records("webcanvas.jsonl", 80)) + "\n")
    abp = root / "abp.jsonl"
    abp.write_text("\n".join(json.dumps(r) for r in dev_records("online_mind2web_abp.jsonl", 40)) + "\n{bad\n")
    return [wc, abp]


def test_task_key_rule():
    a = Trajectory.model_validate({"task": "Find  Flights", "steps": [{"action": "a"}]})
    b = Trajectory.model_validate({"task": "find flights", "steps": [{"action": "b"}]})
    c = Trajectory.model_validate({"task": "find flights", "task_id": "T9", "steps": [{"action": "b"}]})
    assert task_key(a) == task_key(b) != task_key(c) == "id:T9"
    d = Trajectory.model_validate({"task": "Find flights in kayak.", "domain": "kayak.com", "steps": [{"action": "b"}]})
    e = Trajectory.model_validate({"task": "Find flights in Denver", "domain": "kayak.com", "steps": [{"action": "b"}]})
    assert task_key(d) == task_key(a) != task_key(e)


def test_memory_never_returns_the_query_task(files, embedder):
    items, rejected = load_items(files)
    assert rejected == {"wc.jsonl": 0, "abp.jsonl": 1}
    vectors = _Vectors(embedder)
    vectors.prepare([it.episode.embed_text for it in items])
    memory = _Memory(items, list(range(len(items))), vectors, 0.25)
    repeated = [it for it in items if sum(o.task_key == it.task_key for o in items) > 1]
    assert repeated, "webcanvas has several runs of the same task"
    for it in repeated[:15]:
        hits = memory.neighbours(vectors[it.episode.embed_text], it, 20)
        assert hits and all(items[h.id].task_key != it.task_key for h in hits)


def test_report_is_deterministic_and_complete(files, embedder, tmp_path):
    first = evaluate(files, embedder=embedder, config=EvalConfig(seed=3))
    second = evaluate(files, embedder=embedder, config=EvalConfig(seed=3))
    for r in (first, second):
        r["headline"].pop("seconds")
        for f in r["files"].values():
            f.pop("seconds")
        r["pooled"].pop("seconds")
        for f in r["details"].values():
            f.pop("seconds", None)
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    assert set(first["headline"]) == HEADLINE - {"seconds"}
    assert set(first["files"]) == {"wc.jsonl", "abp.jsonl"}
    # the advice section: every intervention's message checked, ten verbatim messages at most, WebArena templates
    assert first["details"]["wc.jsonl"]["advice_interventions"] > 0
    assert first["details"]["wc.jsonl"]["advice_internals"] == 0.0
    assert len(first["messages"]) <= 10 and all(m["system_message"].startswith("Coaching for this run") for m in first["messages"])
    assert first["template_retrieval"]["available"] and first["headline"]["template_p5_webarena"] >= 0.6
    assert first["headline"]["episodes"] == 120
    wc = first["files"]["wc.jsonl"]
    assert 0 <= wc["p5_domain"] <= 1 and wc["auc_t5"] is not None
    assert first["files"]["wc.jsonl"]["p5_family"] is None and first["files"]["abp.jsonl"]["p5_family"] is not None
    expected = (wc["p1_domain"] + first["files"]["abp.jsonl"]["p1_domain"]) / 2
    assert first["headline"]["p1_domain"] == pytest.approx(expected, abs=1e-4)
    paths = write(first, tmp_path / "out")
    assert {p.name for p in paths} == {"report.json", "report.md", "roc_t5.png", "calibration_t5.png", "p5_memory.png"}
    assert all(p.stat().st_size > 0 for p in paths)
    assert "| pooled |" in (tmp_path / "out" / "report.md").read_text()
