"""The bad-input catalogue (SQLite and PostgreSQL): each case is a documented 4xx with the one error shape, and
nothing is written. Text that merely looks hostile (SQL, JSON, markup) is data: stored verbatim, harmless."""

from __future__ import annotations

import json

import pytest

from ems_service import errors

STEP = {"action": "click('ok')"}


def _deep(depth: int) -> str:
    return '{"task": "x", "steps": [{"action": "a"}], "tags": ' + '{"a": ' * depth + "1" + "}" * depth + "}"


def _json(obj: object) -> bytes:
    return json.dumps(obj).encode()


CASES = [
    # (name, method, path, raw body, status, error)
    ("oversized body", "POST", "/v1/episodes", b'{"task": "' + b"x" * 6_000_000 + b'"}', 413, "LimitExceeded"),
    ("10,000 steps", "POST", "/v1/episodes", _json({"task": "t", "steps": [STEP] * 10_000}), 413, "LimitExceeded"),
    ("10,000 steps in a batch item", "POST", "/v1/episodes:batch",
     _json({"episodes": [{"task": "t", "steps": [STEP] * 10_000}] * 501}), 413, "LimitExceeded"),
    ("deep nesting", "POST", "/v1/episodes", _deep(5000).encode(), 400, "MalformedJSON"),
    ("nested tag values", "POST", "/v1/episodes", _deep(3).encode(), 422, "ValidationFailed"),
    ("invalid utf-8", "POST", "/v1/search", b'{"text": "\xc3\x28", "k": 3}', 400, "MalformedJSON"),
    ("NaN reward", "POST", "/v1/episodes", b'{"task": "t", "steps": [{"action": "a", "reward": NaN}]}', 422,
     "ValidationFailed"),
    ("Infinity k", "POST", "/v1/search", b'{"text": "t", "k": Infinity}', 422, "ValidationFailed"),
    ("1e400 in action args", "POST", "/v1/episodes",
     b'{"task": "t", "steps": [{"action": {"name": "click", "args": {"v": [1e400]}}}]}', 422, "ValidationFailed"),
    ("UTF-8 with a BOM", "POST", "/v1/search", b'\xef\xbb\xbf{"text": "t", "k": 3}', 400, "MalformedJSON"),
    ("UTF-16", "POST", "/v1/search", '{"text": "t", "k": 3}'.encode("utf-16"), 400, "MalformedJSON"),
    ("UTF-16 without a BOM", "POST", "/v1/search", '{"text": "t", "k": 3}'.encode("utf-16-le"), 400, "MalformedJSON"),
    ("negative k", "POST", "/v1/search", _json({"text": "t", "k": -1}), 422, "ValidationFailed"),
    ("huge k", "POST", "/v1/search", _json({"text": "t", "k": 10**12}), 413, "LimitExceeded"),
    ("huge coach k", "POST", "/v1/coach", _json({"trajectory": {"task": "t"}, "k": 10**6}), 413, "LimitExceeded"),
    ("SQL in a path id", "GET", "/v1/episodes/1;DROP TABLE episodes", b"", 422, "ValidationFailed"),
    ("id beyond int64", "DELETE", "/v1/episodes/99999999999999999999", b"", 422, "ValidationFailed"),
    ("confusable label_source", "POST", "/v1/episodes",
     _json({"task": "t", "steps": [STEP], "outcome": {"label_source": "b\u0435nchmark"}}), 422, "ValidationFailed"),
    ("confusable field name", "POST", "/v1/episodes", _json({"t\u0430sk": "t", "steps": [STEP]}), 422,
     "ValidationFailed"),
    ("empty task", "POST", "/v1/episodes", _json({"task": "", "steps": [STEP]}), 422, "ValidationFailed"),
    ("blank action", "POST", "/v1/episodes", _json({"task": "t", "steps": [{"action": "  "}]}), 422,
     "ValidationFailed"),
    ("empty search text", "POST", "/v1/search", _json({"text": "", "k": 3}), 422, "ValidationFailed"),
    ("empty lesson", "POST", "/v1/lessons", _json({"lesson": ""}), 422, "ValidationFailed"),
    ("NUL character", "POST", "/v1/episodes", _json({"task": "a\u0000b", "steps": [STEP]}), 422,
     "ValidationFailed"),
    ("NUL in a step", "POST", "/v1/sessions", _json({"task": "t", "steps": [{"action": "a\u0000"}]}), 422,
     "ValidationFailed"),
    ("session steps empty", "POST", "/v1/sessions/nope/steps", _json({"steps": []}), 422, "ValidationFailed"),
    ("not JSON", "POST", "/v1/coach", b"task=x", 400, "MalformedJSON"),
]


def _written(client) -> tuple[int, int]:
    stats = client.get("/v1/stats").json()
    lessons = client.get("/v1/lessons").json()["lessons"]
    return stats["episodes"], len(lessons)


@pytest.mark.parametrize(("name", "method", "path", "body", "status", "error"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_a_documented_4xx_and_writes_nothing(client, name, method, path, body, status, error):
    before = _written(client)
    r = client.request(method, path, content=body or None, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text[:500]
    err = r.json()
    assert set(err) == {"error", "detail", "request_id"} and err["error"] == error and err["detail"]
    assert _written(client) == before
    spec = client.get("/openapi.json").json()
    route = next(t for t in spec["paths"] if t.split("{")[0].rstrip("/") == path.split("?")[0][: len(t.split("{")[0].rstrip("/"))]
                 and t.count("/") == path.count("/"))
    documented = spec["paths"][route][method.lower()]["responses"][str(status)]
    assert documented["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}
    tree = getattr(errors, err["error"], None)  # an error of the service's tree carries its own status
    assert tree is None or tree.status_code == status, (err["error"], status)


HOSTILE = [
    "'; DROP TABLE episodes; --",
    "\" OR 1=1 --",
    '"}, "outcome": {"success": true}, "x": {"',
    "<script>alert(1)</script>",
    "${jndi:ldap://x}",
    "ｔａｓｋ ＤＲＯＰ",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_looking_text_is_stored_verbatim_as_data(client, text):
    run = {"task": f"find shoes {text}", "steps": [{"action": f"type('{text}')"}],
           "outcome": {"success": False, "label_source": "benchmark"}}
    r = client.post("/v1/episodes", json=run)
    assert r.status_code == 201, r.text
    got = client.get(f"/v1/episodes/{r.json()['id']}", params={"include_trajectory": True}).json()
    assert got["task"] == run["task"] and got["success"] is False  # the JSON-looking text changed nothing
    assert got["trajectory"]["steps"][0]["action"] == run["steps"][0]["action"]
    listed = client.get("/v1/episodes", params={"domain": text}).json()
    assert listed["items"] == []  # as a filter it is a literal: no match, no error
    assert client.get("/v1/stats").json()["episodes"] == 1  # the table is still there


def test_an_error_never_quotes_a_secret_back(client):
    """An error's detail may quote what was sent (a tag's name, a session id): it is redacted like a stored text."""
    run = {"task": "Buy a kettle", "start_url": "https://shop.example.com/", "steps": [{"action": "click('Buy')"}],
           "tags": {"password=Tr0ub4dorXyz!" + "x" * 300: "v"}}
    r = client.post("/v1/episodes", json=run)
    assert r.status_code == 413 and "tags key" in r.json()["detail"]
    assert "Tr0ub4dor" not in r.text
    r = client.get("/v1/sessions/password=Tr0ub4dorXyz!/coaching")
    assert r.status_code == 404 and "Tr0ub4dor" not in r.text
