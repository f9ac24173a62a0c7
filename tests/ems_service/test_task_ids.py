"""task_id is derived when a run posts none, on every ingest path, so leaving a task out always works."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from condenser import derive_task_id
from ems_service.cli import app as cli

SITE = "https://www.opentable.com/"


def run(task: str, action: str, success: bool = False) -> dict:
    return {"task": task, "start_url": SITE, "outcome": {"success": success, "label_source": "benchmark"},
            "steps": [{"action": action, "url": SITE}]}


def test_rest_batch_and_session_runs_get_a_derived_task_id(client):
    task = "Book a table for 2 at Luigi's"
    one = client.post("/v1/episodes", json=run(task, "click('Find')")).json()["id"]
    many = client.post("/v1/episodes:batch", json={"episodes": [run(" book a table for 2 at LUIGI'S. ", "click('Go')"),
                                                                 run(task, "click('X')") | {"task_id": "mine"}]})
    batch_ids = [r["id"] for r in many.json()["results"]]
    sid = client.post("/v1/sessions", json={"task": task, "start_url": SITE, "steps": [{"action": "click('S')"}]}).json()["id"]
    session_ep = client.post(f"/v1/sessions/{sid}/finish", json={"outcome": {"success": True}}).json()["episode_id"]
    ids = {i: client.get(f"/v1/episodes/{i}").json()["task_id"] for i in [one, *batch_ids, session_ep]}
    derived = derive_task_id(task)
    assert ids[one] == ids[batch_ids[0]] == ids[session_ep] == derived and ids[batch_ids[1]] == "mine"

    # leave-task-out: every run of the task is gone from the evidence, by id or by `exclude_own_task`
    q = {"trajectory": {"task": task, "start_url": SITE, "steps": [{"action": "click('Find')", "url": SITE}]}, "k": 10}
    got = {e["episode_id"] for e in client.post("/v1/coach", json=q).json()["evidence"]}
    assert {one, batch_ids[0], session_ep} <= got
    for extra in ({"exclude_task_id": derived}, {"exclude_own_task": True}):
        left = {e["episode_id"] for e in client.post("/v1/coach", json=q | extra).json()["evidence"]}
        assert not left & {one, batch_ids[0], session_ep} and batch_ids[1] in left


def test_cli_ingest_of_canonical_lines_derives_task_ids(tmp_path, monkeypatch):
    monkeypatch.setenv("EMS_DATABASE_URL", f"sqlite:///{tmp_path}/ems.db")
    monkeypatch.setenv("EMS_DATA_DIR", str(tmp_path / "data"))
    line = {"id": "x:1", "source": "webcanvas", "task": "Find a CVS store in Boston", "start_url": "https://www.cvs.com",
            "domain": "cvs.com", "agent": "a", "steps": [{"url": None, "observation": None, "thought": None,
                                                          "action": "click[1]", "error": None, "reward": None}],
            "outcome": {"success": False, "label_source": "benchmark", "status": None}, "labels": {}}
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(line) + "\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["db", "upgrade"]).exit_code == 0
    res = runner.invoke(cli, ["ingest", str(path)])
    assert res.exit_code == 0, res.output
    from sqlalchemy import create_engine, text

    with create_engine(f"sqlite:///{tmp_path}/ems.db").connect() as conn:
        assert conn.execute(text("SELECT task_id FROM episodes")).scalar() == derive_task_id(line["task"])


def test_exclude_own_task_finds_the_task_when_it_holds_personal_data(client):
    """The stored task is redacted before its id is derived; the query's own task must be too, or a task with an
    e-mail or a phone number in it gets its own runs back as evidence (43 of the 1,705 dev runs did)."""
    task = "Email the receipt to alice.wonder@example.com and call +1 415 555 0199 about order 7"
    own = client.post("/v1/episodes", json=run(task, "click('Find')")).json()["id"]
    other = client.post("/v1/episodes", json=run("Email the receipt to my office", "click('Find')")).json()["id"]
    q = {"trajectory": {"task": task, "start_url": SITE, "steps": [{"action": "click('Find')", "url": SITE}]}, "k": 10}
    assert own in {e["episode_id"] for e in client.post("/v1/coach", json=q).json()["evidence"]}
    left = {e["episode_id"] for e in client.post("/v1/coach", json=q | {"exclude_own_task": True}).json()["evidence"]}
    assert own not in left and other in left
