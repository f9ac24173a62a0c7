"""Coach over REST and sessions, on SQLite and PostgreSQL, with the real embedder and index."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from coach import PartialRun
from condenser import Step, Trajectory
from ems_service import Runtime

SITE = "https://www.opentable.com/"
TASK = "Book a table for 2 at Luigi's on opentable"
GOOD = ["Navigate to https://www.opentable.com/", "Type \"Luigi's\"", "Press ENTER", "CLICK [link] Luigi's",
        "SELECT: 2 people [combobox] Party size", "CLICK [button] Find a table", "CLICK [button] 7:00 PM"]
BAD = ["Navigate to https://www.opentable.com/", "Type \"Luigi's\"", "click[44]", "click[44]", "click[44]", "click[44]"]
GUIDANCE_KEYS = {"intervene", "failure_risk", "confidence", "advice", "suggested_action", "rationale",
                 "error_to_avoid", "failure_categories", "evidence", "system_message", "reasons", "signals", "plan"}


def episode(actions, success, *, task=TASK, task_id=None, errors=None) -> dict:
    return {"task": task, "start_url": SITE, "task_id": task_id, "outcome": {"success": success, "label_source": "benchmark"},
            "steps": [{"action": a, "error": (errors or {}).get(i)} for i, a in enumerate(actions)]}


def bad_errors(offset=0):
    return {i: f"Element [{40 + i + offset}] not found in the page" for i in range(2, 6)}


@pytest.fixture
def seeded(client):
    eps = [episode(GOOD, True, task_id="T-good-1"),
           episode(GOOD[:-1] + ["CLICK [button] 8:00 PM"], True, task_id="T-good-2"),
           episode(BAD, False, task_id="T-bad-1", errors=bad_errors()),
           episode(BAD[:5], False, task_id="T-bad-2", errors=bad_errors(3)),
           episode(["goto[https://www.imdb.com]", "click[3]"], True, task="Find the top rated movie on imdb")]
    res = client.post("/v1/episodes:batch", json={"episodes": eps}).json()["results"]
    assert all(r["id"] for r in res)
    return client


def partial(actions, errors=None, task=TASK, task_id=None):
    return {"task": task, "start_url": SITE, "task_id": task_id,
            "steps": [{"action": a, "error": (errors or {}).get(i)} for i, a in enumerate(actions)]}


def test_coach_guidance_shape_and_timing(seeded):
    r = seeded.post("/v1/coach", json={"trajectory": partial(BAD[:4], bad_errors(7))})
    assert r.status_code == 200, r.text
    g = r.json()
    assert set(g) == GUIDANCE_KEYS
    assert g["intervene"] is True
    content = g["system_message"]["content"]
    assert g["system_message"]["role"] == "system"
    for internal in ("risk", "similarity", "episode", "0.", "[4", "weight"):
        assert internal not in content.lower(), internal  # the agent reads the coach's words, not its internals
    assert g["reasons"] and {"feature", "value", "weight", "contribution"} == set(g["reasons"][0])
    assert g["signals"] == ["errors"] and "2 of your last 3 actions failed" in g["advice"]
    assert g["evidence"] and {"episode_id", "similarity", "success", "domain", "task", "summary"} == set(g["evidence"][0])
    assert "element_not_found" in g["failure_categories"] or g["error_to_avoid"]
    timing = r.headers["server-timing"]
    assert all(part in timing for part in ("embed;dur=", "search;dur=", "risk;dur=", "guidance;dur="))
    messages = [{"role": "user", "content": "task"}] + [g["system_message"]]
    assert all(set(m) == {"role", "content"} for m in messages)


def test_hot_routes_write_their_model_as_json_and_keep_it_in_the_openapi_schema(seeded):
    """/v1/coach and /v1/search return their model as it stands (ModelJSON: no second validation in the thread
    pool); the body is still that model's JSON, and the schema still documents it."""
    from coach import Guidance
    from ems_service.schemas import SearchResponse

    r = seeded.post("/v1/coach", json={"trajectory": partial(BAD[:4], bad_errors(7))})
    assert r.headers["content-type"] == "application/json"
    assert Guidance.model_validate_json(r.content).model_dump(mode="json") == r.json()
    s = seeded.post("/v1/search", json={"text": TASK, "k": 3})
    assert s.headers["content-type"] == "application/json" and len(s.json()["results"]) == 3
    SearchResponse.model_validate_json(s.content)
    paths = seeded.get("/openapi.json").json()["paths"]
    for path, model in (("/v1/coach", "Guidance"), ("/v1/search", "SearchResponse")):
        schema = paths[path]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert schema == {"$ref": f"#/components/schemas/{model}"}


def test_coach_is_silent_on_a_healthy_run_and_without_similar_evidence(seeded):
    g = seeded.post("/v1/coach", json={"trajectory": partial(GOOD[:3])}).json()
    assert g["intervene"] is False and g["system_message"] is None and g["evidence"]
    far = partial(["click[1]", "click[2]", "click[3]", "click[4]"], task="Renew a fishing licence in Ontario")
    far["start_url"] = "https://www.ontario.ca"
    g = seeded.post("/v1/coach", json={"trajectory": far}).json()
    assert g["intervene"] is False
    # what the run itself shows is said even with no similar episode, with a confidence of its own
    far["steps"] = [{"action": "click[1]", "url": "https://www.ontario.ca/page/fishing"}] * 4
    g = seeded.post("/v1/coach", json={"trajectory": far}).json()
    assert g["intervene"] is True and g["signals"] == ["repeat"] and g["confidence"] >= 0.6
    assert "4 times on /page/fishing" in g["system_message"]["content"]


def test_coach_excludes_task_id_and_other_namespaces(seeded):
    rt: Runtime = seeded.app.state.runtime
    other = Trajectory.model_validate(episode(BAD, False, task_id="T-other-ns", errors=bad_errors(1)))
    other_id = rt.ingest.ingest(namespace="other-fleet", trajectories=[other])[0].id
    g = seeded.post("/v1/coach", json={"trajectory": partial(BAD[:4], bad_errors()), "exclude_task_id": "T-bad-1",
                                       "k": 10}).json()
    ids = {e["episode_id"] for e in g["evidence"]}
    assert other_id not in ids
    tasks = seeded.get("/v1/episodes", params={"limit": 50}).json()["items"]
    bad1 = next(e["id"] for e in tasks if e["task_id"] == "T-bad-1")
    assert bad1 not in ids and ids


def test_session_flow_cooldown_finish_and_restart(seeded, make_client, settings):
    s = seeded.post("/v1/sessions", json={"task": TASK, "start_url": SITE})
    assert s.status_code == 201
    sid = s.json()["id"]
    r = seeded.post(f"/v1/sessions/{sid}/steps", json={"steps": [{"action": a} for a in BAD[:2]]}).json()
    assert r["n_steps"] == 2 and r["guidance"] is None
    r = seeded.post(f"/v1/sessions/{sid}/steps", json={"steps": [
        {"action": "click[44]", "error": "Element [61] not found in the page"},
        {"action": "click[44]", "error": "Element [62] not found in the page"}]}).json()
    assert r["guidance"] and r["guidance"]["intervene"] and r["guidance"]["signals"] == ["errors"]
    # a third identical failure is news (a repeat): said once, then not again within the cooldown
    r2 = seeded.post(f"/v1/sessions/{sid}/steps", json={"steps": [
        {"action": "click[44]", "error": "Element [63] not found in the page"}]}).json()
    assert r2["guidance"] and r2["guidance"]["signals"] == ["repeat"]
    r3 = seeded.post(f"/v1/sessions/{sid}/steps", json={"steps": [
        {"action": "click[44]", "error": "Element [64] not found in the page"}]}).json()
    assert r3["guidance"] is None
    coaching = seeded.get(f"/v1/sessions/{sid}/coaching").json()
    assert set(coaching) == GUIDANCE_KEYS and coaching["failure_risk"] >= 0.4

    with make_client(settings) as again:  # a second process on the same database: the session survives
        assert again.get(f"/v1/sessions/{sid}").json()["n_steps"] == 6
        fin = again.post(f"/v1/sessions/{sid}/finish", json={"outcome": {"success": False, "label_source": "judge"}})
        assert fin.status_code == 200, fin.text
        episode_id = fin.json()["episode_id"]
        res = again.post("/v1/search", json={"text": TASK, "k": 10}).json()["results"]
        assert episode_id in [x["id"] for x in res]
        assert again.post(f"/v1/sessions/{sid}/finish", json={"outcome": {"success": False}}).status_code == 409
        assert again.post(f"/v1/sessions/{sid}/steps", json={"steps": [{"action": "x"}]}).status_code == 409


def test_session_errors_and_expiry(seeded, settings):
    assert seeded.get("/v1/sessions/nope").status_code == 404
    assert seeded.post("/v1/sessions/nope/steps", json={"steps": [{"action": "a"}]}).status_code == 404
    sid = seeded.post("/v1/sessions", json={"task": TASK}).json()["id"]
    assert seeded.post(f"/v1/sessions/{sid}/steps", json={"steps": []}).status_code == 422
    assert seeded.post(f"/v1/sessions/{sid}/finish", json={"outcome": {"success": True}}).status_code == 409
    rt: Runtime = seeded.app.state.runtime
    settings.coach.session_ttl_s = 0.001
    import time

    time.sleep(0.01)
    assert seeded.get(f"/v1/sessions/{sid}").status_code == 404
    assert rt.sessions.expire() >= 1
    assert sid not in rt.sessions._locks  # expired sessions leave no per-session lock behind


def test_finished_sessions_leave_no_locks(seeded):
    rt: Runtime = seeded.app.state.runtime
    before = len(rt.sessions._locks)
    for i in range(5):
        sid = seeded.post("/v1/sessions", json={"task": f"{TASK} {i}"}).json()["id"]
        assert seeded.post(f"/v1/sessions/{sid}/steps", json={"steps": [{"action": "click('#go')"}]}).status_code == 200
        assert seeded.post(f"/v1/sessions/{sid}/finish", json={"outcome": {"success": True}}).status_code == 200
        assert seeded.post(f"/v1/sessions/{sid}/finish", json={"outcome": {"success": True}}).status_code == 409
    for i in range(5):  # unknown ids: 404, and no lock kept for them either
        assert seeded.post(f"/v1/sessions/nope-{i}/steps", json={"steps": [{"action": "a"}]}).status_code == 404
    assert len(rt.sessions._locks) == before


def test_calibrate_fits_better_than_default_on_dev_data(client):
    from ems_service.dataset import to_trajectory
    from tests.conftest import dev_records

    rt: Runtime = client.app.state.runtime
    rt.settings.coach.refit_every = 0
    records = dev_records("webcanvas.jsonl")
    rt.ingest.ingest(namespace="default", trajectories=[to_trajectory(r) for r in records])
    metrics = rt.risk.calibrate(namespace="default", max_episodes=250)
    assert metrics["log_loss_fitted"] < metrics["log_loss_default"]
    assert rt.risk.model("default").kind == "fitted"
    assert rt.risk.fitted_info("default")["metrics"] == metrics


def test_concurrent_appends_never_drain_the_connection_pool(seeded):
    """More concurrent appends than the pool has connections: an append used to hold its connection while the
    coach waited for another, so 15+ of them deadlocked until the pool's 30 s timeout and failed."""
    rt: Runtime = seeded.app.state.runtime
    pool = rt.db.engine.pool
    capacity = pool.size() + max(0, pool._max_overflow) if hasattr(pool, "_max_overflow") else pool.size()
    sessions = [rt.sessions.start(namespace="default", run=PartialRun.model_validate(partial(GOOD[:2], task=f"{TASK} {i}")))
                for i in range(capacity + 8)]

    def append(record):
        return rt.sessions.append(namespace="default", session_id=record.id, steps=[Step(action="click[44]")])

    with ThreadPoolExecutor(max_workers=len(sessions)) as workers:
        results = list(workers.map(append, sessions))
    assert [r.n_steps for r, _ in results] == [3] * len(sessions)
