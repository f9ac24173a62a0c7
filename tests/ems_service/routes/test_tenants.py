"""Tenants: keys resolve namespaces; no key can read, list, search, coach from, relabel or delete another
namespace's data. Every /v1 route is tried cross-tenant (a new route without a case here fails the test)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from ems_service.cli import app as cli

TASK = "Book a table for 2 at Luigi's on opentable"
URL = "https://www.opentable.com/r/luigis"


def episode(i: int) -> dict:
    return {"task": f"{TASK} #{i}", "start_url": URL, "task_id": f"A-{i}",
            "outcome": {"success": i % 2 == 0, "label_source": "judge"},
            "steps": [{"action": "fill('#q', 'a', 'b')", "error": "fill() got too many arguments"},
                      {"action": "click('#q')"}, {"action": f"CLICK [button] Slot {i}"}]}


@pytest.fixture
def tenants(client):
    rt = client.app.state.runtime
    _, admin = rt.keys.create(namespace="ops", admin=True)
    _, key_a = rt.keys.create(namespace="fleet-a")
    _, key_b = rt.keys.create(namespace="fleet-b")
    _, key_bv = rt.keys.create(namespace="fleet-b", role="verifier")
    return client, {"admin": admin, "a": key_a, "b": key_b, "bv": key_bv}


def h(key: str, bearer: bool = True) -> dict:
    return {"Authorization": f"Bearer {key}"} if bearer else {"X-API-Key": key}


def test_keys_are_required_once_one_exists(tenants):
    client, keys = tenants
    assert client.get("/healthz").status_code == 200 and client.get("/readyz").status_code == 200
    r = client.get("/v1/stats")
    assert r.status_code == 401 and r.json()["error"] == "Unauthorized" and r.json()["request_id"]
    assert client.get("/v1/stats", headers=h("ems_wrong")).status_code == 401
    assert client.get("/docs").status_code == 401
    assert client.get("/v1/stats", headers=h(keys["a"])).json()["namespace"] == "fleet-a"
    assert client.get("/v1/stats", headers=h(keys["b"], bearer=False)).json()["namespace"] == "fleet-b"
    rt = client.app.state.runtime
    rt.keys.revoke(keys["b"])
    r = client.get("/v1/stats", headers=h(keys["b"]))
    assert r.status_code == 403 and "revoked" in r.json()["detail"]


def test_admin_routes(tenants):
    client, keys = tenants
    assert client.post("/v1/admin/keys", json={"namespace": "x"}, headers=h(keys["a"])).status_code == 403
    r = client.post("/v1/admin/keys", json={"namespace": "fleet-c"}, headers=h(keys["admin"]))
    assert r.status_code == 201 and r.json()["key"].startswith("ems_")
    new = r.json()
    assert client.get("/v1/stats", headers=h(new["key"])).json()["namespace"] == "fleet-c"
    listed = client.get("/v1/admin/keys", headers=h(keys["admin"])).json()["keys"]
    assert all("key" not in k and "key_hash" not in k for k in listed)
    assert client.delete(f"/v1/admin/keys/{new['id']}", headers=h(keys["admin"])).status_code == 200
    assert client.get("/v1/stats", headers=h(new["key"])).status_code == 403


def test_every_route_is_isolated(tenants):
    client, keys = tenants
    A, B = h(keys["a"]), h(keys["b"])
    ids = [r["id"] for r in client.post("/v1/episodes:batch", json={"episodes": [episode(i) for i in range(4)]},
                                        headers=A).json()["results"]]
    sid = client.post("/v1/sessions", json={"task": TASK, "start_url": URL}, headers=A).json()["id"]
    lesson_a = client.post("/v1/lessons", json={"lesson": "Luigi's needs the party size first",
                                                "domain": "opentable.com"}, headers=A).json()["id"]
    client.post("/v1/facts", json={"domain": "opentable.com", "intent": "book", "selectors": ["#secret-a"]}, headers=A)
    a_events = {e["id"] for e in client.get("/v1/events", params={"limit": 500}, headers=A).json()["items"]}
    assert a_events
    partial = {"task": TASK, "start_url": URL, "steps": episode(0)["steps"][:1]}
    eid = ids[0]
    checks = {
        ("POST", "/v1/episodes"): lambda: client.post("/v1/episodes", json=episode(0), headers=B).json()["deduplicated"] is False,
        ("POST", "/v1/episodes:batch"): lambda: client.post("/v1/episodes:batch", json={"episodes": [episode(1)]},
                                                            headers=B).json()["results"][0]["deduplicated"] is False,
        ("GET", "/v1/episodes/{episode_id}"): lambda: client.get(f"/v1/episodes/{eid}", headers=B).status_code == 404,
        ("GET", "/v1/episodes"): lambda: not {e["id"] for e in client.get("/v1/episodes", headers=B).json()["items"]} & set(ids),
        ("DELETE", "/v1/episodes/{episode_id}"): lambda: client.delete(f"/v1/episodes/{eid}", headers=B).status_code == 404,
        ("POST", "/v1/episodes/{episode_id}/label"): lambda: client.post(
            f"/v1/episodes/{eid}/label", json={"success": False, "label_source": "judge"}, headers=B).status_code == 404,
        ("POST", "/v1/search"): lambda: not {r["id"] for r in client.post(
            "/v1/search", json={"text": TASK, "k": 20}, headers=B).json()["results"]} & set(ids),
        ("POST", "/v1/coach"): lambda: not {e["episode_id"] for e in client.post(
            "/v1/coach", json={"trajectory": partial, "k": 20}, headers=B).json()["evidence"]} & set(ids),
        ("POST", "/v1/sessions"): lambda: client.post("/v1/sessions", json={"task": "t"}, headers=B).status_code == 201,
        ("GET", "/v1/sessions/{session_id}"): lambda: client.get(f"/v1/sessions/{sid}", headers=B).status_code == 404,
        ("POST", "/v1/sessions/{session_id}/steps"): lambda: client.post(
            f"/v1/sessions/{sid}/steps", json={"steps": [{"action": "a"}]}, headers=B).status_code == 404,
        ("GET", "/v1/sessions/{session_id}/coaching"): lambda: client.get(
            f"/v1/sessions/{sid}/coaching", headers=B).status_code == 404,
        ("POST", "/v1/sessions/{session_id}/finish"): lambda: client.post(
            f"/v1/sessions/{sid}/finish", json={"outcome": {"success": True}}, headers=B).status_code == 404,
        ("GET", "/v1/lessons"): lambda: all(r["source"] == "seed" for r in client.get("/v1/lessons", headers=B).json()["lessons"]),
        ("POST", "/v1/lessons"): lambda: client.post("/v1/lessons", json={"lesson": "b's own"}, headers=B).status_code == 201,
        ("POST", "/v1/lessons/{lesson_id}/promote"): lambda: client.post(
            f"/v1/lessons/{lesson_a}/promote", headers=h(keys["bv"])).status_code == 404,
        ("POST", "/v1/lessons/recall"): lambda: client.post("/v1/lessons/recall", json={"domain": "opentable.com"},
                                                            headers=B).json()["lessons"] == [],
        ("GET", "/v1/experience"): lambda: (lambda r: not set(r["episodes"]) & set(ids)
                                            and "#secret-a" not in r["facts"].get("selectors", []))(
            client.get("/v1/experience", params={"url": URL, "intent": "book"}, headers=B).json()),
        ("POST", "/v1/facts"): lambda: client.post("/v1/facts", json={"domain": "opentable.com", "intent": "book"},
                                                   headers=B).json()["selectors"] == [],
        ("GET", "/v1/events"): lambda: not {e["id"] for e in client.get("/v1/events", params={"limit": 500},
                                                                        headers=B).json()["items"]} & a_events,
        ("GET", "/v1/stats"): lambda: client.get("/v1/stats", headers=B).json()["namespace"] == "fleet-b",
        ("POST", "/v1/admin/keys"): lambda: client.post("/v1/admin/keys", json={"namespace": "fleet-a"},
                                                        headers=B).status_code == 403,
        ("GET", "/v1/admin/keys"): lambda: client.get("/v1/admin/keys", headers=B).status_code == 403,
        ("DELETE", "/v1/admin/keys/{key_id}"): lambda: client.delete("/v1/admin/keys/1", headers=B).status_code == 403,
        ("GET", "/metrics"): lambda: client.get("/metrics", headers=B).status_code == 403,
    }
    spec = client.get("/openapi.json", headers=A).json()
    routes = {(m.upper(), path) for path, ops in spec["paths"].items() if path.startswith("/v1") for m in ops}
    assert len(routes) >= 20
    assert routes <= set(checks), f"routes without a cross-tenant check: {routes - set(checks)}"
    for route, check in checks.items():
        assert check(), route
    # and fleet-a still sees all of its own data, untouched
    assert client.get(f"/v1/episodes/{eid}", headers=A).json()["success"] is True
    assert client.get(f"/v1/sessions/{sid}", headers=A).json()["status"] == "open"
    assert client.get("/v1/experience", params={"url": URL, "intent": "book"}, headers=A).json()["facts"]["selectors"] == ["#secret-a"]


def test_cli_keys(tmp_path, monkeypatch):
    from ems_service.db import upgrade

    url = f"sqlite:///{tmp_path / 'k.db'}"
    upgrade(url)
    monkeypatch.setenv("EMS_DATABASE_URL", url)
    runner = CliRunner()
    r = runner.invoke(cli, ["keys", "create", "--namespace", "fleet-a"])
    assert r.exit_code == 0
    key = r.stdout.strip().splitlines()[-1]
    assert key.startswith("ems_") and len(key) > 30
    assert key not in runner.invoke(cli, ["keys", "list"]).stdout
    assert runner.invoke(cli, ["keys", "revoke", key]).exit_code == 0
    assert '"revoked": true' in runner.invoke(cli, ["keys", "list"]).stdout
    # without any key, embedded mode refuses a public bind
    url2 = f"sqlite:///{tmp_path / 'k2.db'}"
    upgrade(url2)
    monkeypatch.setenv("EMS_DATABASE_URL", url2)
    r = runner.invoke(cli, ["serve", "--host", "0.0.0.0", "--no-migrate"])
    assert r.exit_code == 2 and "embedded mode binds 127.0.0.1 only" in r.output
