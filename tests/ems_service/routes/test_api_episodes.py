"""REST: ingest, dedup, read, list with cursors, delete, search, and every bad input (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from ems_service.dataset import to_trajectory
from tests.conftest import dev_records


def payload(record: dict) -> dict:
    return to_trajectory(record).model_dump(mode="json", exclude_none=True)


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return dev_records("webcanvas.jsonl", 30) + dev_records("mind2web_demos.jsonl", 30)


def count(client) -> int:
    return client.get("/v1/stats").json()["episodes"]


def test_ingest_get_dedup_delete(client, records):
    body = payload(records[0])
    r = client.post("/v1/episodes", json=body)
    assert r.status_code == 201, r.text
    first = r.json()
    assert first["deduplicated"] is False
    assert r.headers["x-request-id"]

    again = client.post("/v1/episodes", json=body)
    assert again.status_code == 200
    assert again.json() | {"label_downgraded": False, "notes": []} == {"id": first["id"], "deduplicated": True,
                                                                  "label_downgraded": False, "notes": []}

    ep = client.get(f"/v1/episodes/{first['id']}").json()
    assert ep["seen_count"] == 2
    assert ep["task"] == records[0]["task"]
    assert ep["embedding_model"].endswith("all-MiniLM-L6-v2")
    full = client.get(f"/v1/episodes/{first['id']}", params={"include_trajectory": True}).json()
    assert len(full["trajectory"]["steps"]) == len(records[0]["steps"])

    assert client.delete(f"/v1/episodes/{first['id']}").status_code == 204
    missing = client.get(f"/v1/episodes/{first['id']}")
    assert missing.status_code == 404
    assert missing.json()["error"] == "EpisodeNotFound" and missing.json()["request_id"]
    assert client.delete(f"/v1/episodes/{first['id']}").status_code == 404
    res = client.post("/v1/search", json={"text": records[0]["task"], "k": 5}).json()["results"]
    assert first["id"] not in [x["id"] for x in res]


def test_batch_keeps_order_and_isolates_bad_items(client, records):
    items = [payload(records[1]), {"task": "no steps", "steps": []}, payload(records[2]), payload(records[1])]
    r = client.post("/v1/episodes:batch", json={"episodes": items})
    assert r.status_code == 200, r.text
    res = r.json()["results"]
    assert len(res) == 4
    assert res[0]["id"] and res[0]["deduplicated"] is False
    assert "steps" in res[1]["error"] and res[1]["id"] is None
    assert res[2]["id"] and res[2]["id"] != res[0]["id"]
    assert res[3] == {"id": res[0]["id"], "deduplicated": True, "label_downgraded": False, "error": None}
    assert count(client) == 2


def test_list_pagination_and_filters(client, records):
    client.post("/v1/episodes:batch", json={"episodes": [payload(r) for r in records]})
    total = count(client)
    seen, cursor = [], None
    while True:
        params = {"limit": 7} | ({"cursor": cursor} if cursor else {})
        page = client.get("/v1/episodes", params=params).json()
        seen += [e["id"] for e in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == total == len(set(seen)) and seen == sorted(seen)
    fails = client.get("/v1/episodes", params={"success": False, "limit": 500}).json()["items"]
    assert fails and all(e["success"] is False for e in fails)
    dom = records[0]["domain"]
    by_domain = client.get("/v1/episodes", params={"domain": dom, "limit": 500}).json()["items"]
    assert by_domain and all(e["domain"] == dom for e in by_domain)
    assert client.get("/v1/episodes", params={"cursor": "abc"}).status_code == 400


def test_search_filters_and_scores(client, records):
    client.post("/v1/episodes:batch", json={"episodes": [payload(r) for r in records]})
    target = records[4]
    assert "@" not in target["task"]
    r = client.post("/v1/search", json={"text": target["task"], "k": 5})
    assert r.status_code == 200
    res = r.json()["results"]
    assert res[0]["task"] == target["task"] and res[0]["similarity"] > 0.6
    assert [x["similarity"] for x in res] == sorted([x["similarity"] for x in res], reverse=True)
    dom = records[40]["domain"]
    res = client.post("/v1/search", json={"text": target["task"], "k": 5, "domain": dom}).json()["results"]
    assert res and all(x["domain"] == dom for x in res)
    res = client.post("/v1/search", json={"text": target["task"], "k": 10, "success": False}).json()["results"]
    assert res and all(x["success"] is False for x in res)
    res = client.post("/v1/search", json={"text": target["task"], "k": 10, "min_similarity": 0.5}).json()["results"]
    assert all(x["similarity"] >= 0.5 for x in res)
    traj = {"task": target["task"], "steps": target["steps"][:2]}
    res = client.post("/v1/search", json={"trajectory": traj, "k": 3}).json()["results"]
    assert res[0]["domain"] == target["domain"]


def test_exclude_task_id(client):
    base = {"task": "Find the cheapest kettle", "start_url": "https://kettles.example.com"}
    a = client.post("/v1/episodes", json=base | {"task_id": "T1", "steps": [{"action": "click[1]"}]}).json()["id"]
    b = client.post("/v1/episodes", json=base | {"task_id": "T2", "steps": [{"action": "click[2]"}]}).json()["id"]
    res = client.post("/v1/search", json={"text": base["task"], "k": 5, "exclude_task_id": "T1"}).json()["results"]
    assert [x["id"] for x in res] == [b]
    assert a != b


BAD = [
    ("malformed json", b'{"task": "x", "steps": [', 400, "MalformedJSON"),
    ("not an object", b'[1, 2]', 422, "ValidationFailed"),
    ("empty steps", b'{"task": "x", "steps": []}', 422, "steps"),
    ("missing task", b'{"steps": [{"action": "a"}]}', 422, "task"),
    ("wrong type", b'{"task": "x", "steps": [{"action": "a", "reward": "high"}]}', 422, "reward"),
    ("nan reward", b'{"task": "x", "steps": [{"action": "a", "reward": NaN}]}', 422, "reward"),
    ("infinity", b'{"task": "x", "steps": [{"action": "a", "reward": Infinity}]}', 422, "reward"),
    ("bad label", b'{"task": "x", "steps": [{"action": "a"}], "outcome": {"label_source": "me"}}', 422, "label_source"),
    ("invalid utf-8", b'{"task": "\xff\xfe", "steps": [{"action": "a"}]}', 400, "MalformedJSON"),
]


@pytest.mark.parametrize("name,body,status,word", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_a_clear_4xx_and_writes_nothing(client, name, body, status, word):
    r = client.post("/v1/episodes", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    err = r.json()
    assert set(err) == {"error", "detail", "request_id"}
    assert word in err["detail"] or word == err["error"]
    assert count(client) == 0


def test_limits_are_enforced_and_named(make_client, settings):
    settings.limits.max_steps = 3
    settings.limits.max_field_chars = 100
    settings.limits.max_k = 10
    settings.limits.max_body_bytes = 4096
    settings.limits.max_batch = 2
    with make_client(settings) as client:
        cases = [
            ("/v1/episodes", {"task": "x", "steps": [{"action": "a"}] * 4}, "EMS_LIMITS__MAX_STEPS"),
            ("/v1/episodes", {"task": "x", "steps": [{"action": "a", "thought": "t" * 101}]}, "EMS_LIMITS__MAX_FIELD_CHARS"),
            ("/v1/episodes", {"task": "x", "steps": [{"action": "a" * 5000}]}, "EMS_LIMITS__MAX_BODY_BYTES"),
            ("/v1/search", {"text": "x", "k": 11}, "EMS_LIMITS__MAX_K"),
            ("/v1/episodes:batch", {"episodes": [{"task": "x", "steps": [{"action": "a"}]}] * 3}, "EMS_LIMITS__MAX_BATCH"),
        ]
        for path, body, limit in cases:
            r = client.post(path, json=body)
            assert r.status_code == 413, (limit, r.text)
            assert limit in r.json()["detail"]
        r = client.post("/v1/search", json={"text": "x", "k": 0})
        assert r.status_code == 422
        r = client.post("/v1/search", json={"text": "x", "trajectory": {"task": "y", "steps": [{"action": "a"}]}})
        assert r.status_code == 422 and "exactly one" in r.json()["detail"]
        assert count(client) == 0


def test_health_ready_openapi(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json()["status"] == "ready"
    spec = client.get("/openapi.json").json()
    assert {"/v1/episodes", "/v1/episodes:batch", "/v1/search", "/v1/stats"} <= set(spec["paths"])
    r = client.get("/v1/nope")
    assert r.status_code == 404 and r.json()["error"] == "NotFound"


def test_metrics_count_each_request_by_route_and_status(client):
    """The latency histogram (ObserveLatency) counts every request under its matched route and status, an unknown
    path as `unmatched`, and a refused body under its route with the refusal's status."""
    import re

    def seen(method: str, route: str, status: int) -> int:
        text = client.get("/metrics").text
        m = re.search(rf'ems_request_seconds_count{{method="{method}",route="{re.escape(route)}",status="{status}"}} '
                      r"([0-9.]+)", text)
        return int(float(m.group(1))) if m else 0

    before = (seen("POST", "/v1/search", 200), seen("GET", "unmatched", 404), seen("POST", "/v1/search", 422))
    for _ in range(3):
        assert client.post("/v1/search", json={"text": "book a flight", "k": 3}).status_code == 200
    assert client.get("/v1/nope").status_code == 404
    assert client.post("/v1/search", json={"k": 3}).status_code == 422
    after = (seen("POST", "/v1/search", 200), seen("GET", "unmatched", 404), seen("POST", "/v1/search", 422))
    assert [a - b for a, b in zip(after, before, strict=True)] == [3, 1, 1]
