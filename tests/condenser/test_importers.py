"""Foreign formats -> canonical trajectories (condenser.importers + ems_service.importing + the CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from condenser.importers import from_agentlab, from_browser_use, from_webcoach_ref, render_browser_use_action
from ems_service.cli import app
from ems_service.dataset import read_jsonl
from ems_service.errors import BadRequest
from ems_service.importing import read_foreign

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def test_browser_use_action_rendering():
    assert render_browser_use_action({"click": {"index": 12}, "interacted_element": None}) == "click(index=12)"
    assert render_browser_use_action({"input": {"index": 3, "text": "a \"b\""}}) == 'input(index=3, text="a \\"b\\"")'
    assert render_browser_use_action({"go_back": {}}) == "go_back()"


def test_browser_use_needs_a_task_and_actions():
    with pytest.raises(ValueError, match="task"):
        from_browser_use({"history": [{"model_output": {"action": [{"go_back": {}}]}, "result": [{}],
                                       "state": {}}]})
    with pytest.raises(ValueError, match="no executed actions"):
        from_browser_use({"history": [{"model_output": None, "result": [], "state": {}}]}, task="t")
    with pytest.raises(ValueError, match="AgentHistoryList"):
        from_browser_use({"steps": []}, task="t")


def test_agentlab_moves_errors_back_onto_their_step():
    steps = [json.loads(p.read_text()) for p in sorted((FIX / "agentlab" / "webarena.310_0").glob("step_*.json"))]
    summary = json.loads((FIX / "agentlab" / "webarena.310_0" / "summary_info.json").read_text())
    traj = from_agentlab(steps, summary=summary, task_id="webarena.310_0")
    assert len(traj.steps) == 5 and traj.task == steps[0]["obs"]["goal"]
    assert traj.outcome.success is False and traj.outcome.label_source == "benchmark"
    for i, step in enumerate(traj.steps):  # an error shows in the *next* observation
        assert step.error == (steps[i + 1]["obs"]["last_action_error"] or None)
    assert traj.steps[0].thought == steps[0]["agent_info"]["think"]
    won = [dict(s, reward=1.0 if s["step"] == 4 else 0.0) for s in steps]
    assert from_agentlab(won, summary={"cum_reward": 1.0, "terminated": True}).outcome.success is True


def test_webcoach_reference_condensed_episodes():
    items = json.loads((FIX / "webcoach_ref" / "ems_data.json").read_text())
    failed, ok = (from_webcoach_ref(i) for i in items)
    assert failed.outcome.success is False and failed.steps[0].error and failed.domain == items[0]["data"]["meta"]["domain"][4:]
    assert ok.outcome.success is True and ok.steps[0].action.startswith("workflow(")
    assert failed.task == items[0]["data"]["meta"]["goal"]


def test_read_foreign_reports_bad_files(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "good.json").write_text((FIX / "browser_use" / "succeeded.json").read_text())
    got = {Path(i.origin).name: i for i in read_foreign("browser-use", tmp_path)}
    assert got["good.json"].trajectory is not None and got["bad.json"].error.startswith("not valid JSON")
    with pytest.raises(BadRequest, match="unknown format"):
        list(read_foreign("nope", tmp_path))


@pytest.mark.parametrize(("fmt", "path", "n"), [
    ("browser-use", FIX / "browser_use", 2),
    ("agentlab", FIX / "agentlab", 1),
    ("webcoach-ref", FIX / "webcoach_ref" / "ems_data.json", 2),
])
def test_import_from_cli_writes_canonical_jsonl(tmp_path, fmt, path, n):
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["import-from", fmt, str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = list(read_jsonl(out))
    assert len(lines) == n and all(line.trajectory is not None for line in lines)
    assert all(line.trajectory.tags["imported_from"] == fmt for line in lines)


def test_import_from_cli_errors(tmp_path):
    runner = CliRunner()
    assert runner.invoke(app, ["import-from", "nope", str(tmp_path)]).exit_code == 2
    (tmp_path / "x.json").write_text("[]")
    assert runner.invoke(app, ["import-from", "browser-use", str(tmp_path / "x.json")]).exit_code == 1
