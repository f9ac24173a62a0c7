"""CLI: db upgrade, ingest with a summary of rejects (line numbers and reasons), search, stats."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ems_service.cli import app
from tests.conftest import dev_records


def test_ingest_search_stats(tmp_path, monkeypatch):
    db = tmp_path / "cli.db"
    monkeypatch.setenv("EMS_DATABASE_URL", f"sqlite:///{db}")
    monkeypatch.setenv("EMS_DATA_DIR", str(tmp_path / "data"))
    records = dev_records("webcanvas.jsonl", 12)
    lines = [json.dumps(r) for r in records]
    lines.insert(3, "{not json")
    lines.insert(6, json.dumps({"task": "x", "steps": []}))
    lines.insert(9, json.dumps({"task": "x" * 2001, "steps": [{"action": "click('a')"}]}))  # the API's limits too
    lines.append(json.dumps(records[0]))
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n")

    runner = CliRunner()
    assert runner.invoke(app, ["db", "upgrade"]).exit_code == 0
    result = runner.invoke(app, ["ingest", str(path)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "rejected 3" in out and "deduplicated" in out
    assert "runs.jsonl:4: invalid JSON" in out
    assert "runs.jsonl:7: steps" in out
    assert "runs.jsonl:10: task has 2001 characters; the limit is 2000 (EMS_LIMITS__MAX_TASK_CHARS)" in " ".join(
        out.split())  # however the console wraps it

    result = runner.invoke(app, ["search", records[5]["task"], "--k", "2", "--json"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout[result.stdout.index("["):])
    assert hits[0]["task"] == records[5]["task"]

    result = runner.invoke(app, ["stats"])
    stats = json.loads(result.stdout[result.stdout.index("{"):])
    assert stats["episodes"] + stats["deduplicated"] == 12 + 1 - 0


def test_calibrate_command(tmp_path, monkeypatch):
    monkeypatch.setenv("EMS_DATABASE_URL", f"sqlite:///{tmp_path / 'cal.db'}")
    monkeypatch.setenv("EMS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("EMS_COACH__REFIT_EVERY", "0")
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in dev_records("webcanvas.jsonl")) + "\n")
    runner = CliRunner()
    assert runner.invoke(app, ["db", "upgrade"]).exit_code == 0
    assert runner.invoke(app, ["ingest", str(path)]).exit_code == 0
    result = runner.invoke(app, ["calibrate", "--max-episodes", "150"])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout[result.stdout.index("{"):])
    assert metrics["train_samples"] > 0 and "log_loss_fitted" in metrics


def test_calibrate_refuses_without_both_outcomes(tmp_path, monkeypatch):
    monkeypatch.setenv("EMS_DATABASE_URL", f"sqlite:///{tmp_path / 'cal.db'}")
    monkeypatch.setenv("EMS_DATA_DIR", str(tmp_path / "data"))
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in dev_records("mind2web_demos.jsonl", 30)) + "\n")
    runner = CliRunner()
    runner.invoke(app, ["db", "upgrade"])
    runner.invoke(app, ["ingest", str(path)])
    result = runner.invoke(app, ["calibrate"])
    assert result.exit_code == 1 and "cannot fit" in result.output


def test_export_import_roundtrip_reembeds(tmp_path, monkeypatch):
    from ems_service.db import upgrade

    a, b = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    upgrade(a)
    upgrade(b)
    runner = CliRunner()
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in dev_records("webcanvas.jsonl", 15)) + "\n")
    monkeypatch.setenv("EMS_DATABASE_URL", a)
    monkeypatch.setenv("EMS_DATA_DIR", str(tmp_path / "da"))
    assert runner.invoke(app, ["ingest", str(path), "--namespace", "fleet-a"]).exit_code == 0
    out = tmp_path / "export.jsonl"
    r = runner.invoke(app, ["export", str(out), "--namespace", "fleet-a"])
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines and all("outcome" in x and x["steps"] for x in lines)
    monkeypatch.setenv("EMS_DATABASE_URL", b)
    monkeypatch.setenv("EMS_DATA_DIR", str(tmp_path / "db"))
    r = runner.invoke(app, ["import", str(out), "--namespace", "fleet-b"])
    assert r.exit_code == 0 and f"inserted {len(lines)}" in r.output
    from ems_service.repositories import Database, EpisodeFilter, EpisodeRepository, IndexFeed

    db = Database(b)
    rows = EpisodeRepository(db).page("fleet-b", EpisodeFilter(), after_id=None, limit=100)
    assert len(rows) == len(lines) and all(r.source == "seed" for r in rows)
    assert {(v.id, len(v.vector)) for batch in IndexFeed(db, EpisodeRepository(db)).iter_index_rows("fleet-b")
            for v in batch} == {(r.id, 384) for r in rows}
    db.close()


def test_serve_sets_the_gil_switch_interval(tmp_path, monkeypatch):
    """`EMS_GIL_SWITCH_MS` reaches `sys.setswitchinterval` before uvicorn starts; unset, 20 ms."""
    import sys

    import uvicorn

    seen: list[float] = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: seen.append(sys.getswitchinterval()))
    monkeypatch.setenv("EMS_DATABASE_URL", f"sqlite:///{tmp_path / 'serve.db'}")
    monkeypatch.setenv("EMS_DATA_DIR", str(tmp_path / "data"))
    before = sys.getswitchinterval()
    try:
        monkeypatch.setenv("EMS_GIL_SWITCH_MS", "2.5")
        assert CliRunner().invoke(app, ["serve"]).exit_code == 0
        monkeypatch.delenv("EMS_GIL_SWITCH_MS")
        sys.setswitchinterval(before)
        assert CliRunner().invoke(app, ["serve"]).exit_code == 0
    finally:
        sys.setswitchinterval(before)
    assert seen == [0.0025, 0.02]
