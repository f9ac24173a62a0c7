"""Shared parts of the hardening catalogues: one full request per route (every field the API accepts filled in),
its leaves enumerated for generated variants, and a census of every table to prove nothing was half-written."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from sqlalchemy import func, select

from ems_service.tables import Base

STEP = {"url": "https://shop.example.com/p/1", "observation": "a page", "thought": "buy it", "action": "click('#buy')",
        "error": "element not found", "reward": 0.5, "ts": "2026-01-01T00:00:00Z"}
OUTCOME = {"success": False, "label_source": "self_report", "status": "done", "verified": False}
RUN = {"task": "Buy the blue kettle", "steps": [STEP], "outcome": OUTCOME, "start_url": "https://shop.example.com/",
       "domain": "shop.example.com", "agent": "agent-1", "model": "model-1", "task_id": "T-1", "source": "self",
       "tags": {"team": "a"}}
PARTIAL = {k: v for k, v in RUN.items() if k != "outcome"}

# (method, path template, body): every request body the API takes, each field present; `{session}`, `{episode}`
# and `{lesson}` are filled in with fresh ids per case
BODIES: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "/v1/episodes", RUN),
    ("POST", "/v1/search", {"text": "blue kettle", "k": 3, "domain": "shop.example.com", "success": False,
                            "exclude_task_id": "T-9", "min_similarity": 0.1}),
    ("POST", "/v1/search", {"trajectory": RUN, "k": 3}),
    ("POST", "/v1/coach", {"trajectory": PARTIAL, "k": 3, "exclude_task_id": "T-9", "domain": "shop.example.com",
                           "exclude_own_task": False}),
    ("POST", "/v1/sessions", PARTIAL),
    ("POST", "/v1/sessions/{session}/steps", {"steps": [STEP]}),
    ("POST", "/v1/sessions/{session}/finish", {"outcome": OUTCOME}),
    ("POST", "/v1/lessons", {"lesson": "Close the chat widget first", "category": "site_specific",
                             "domain": "shop.example.com", "failed_command": "click", "error": "element not found"}),
    ("POST", "/v1/lessons/recall", {"command": "click('#buy')", "error": "element not found"}),
    ("POST", "/v1/lessons/recall", {"domain": "shop.example.com"}),
    ("POST", "/v1/facts", {"domain": "shop.example.com", "intent": "buy", "selectors": ["#buy"],
                           "interaction_hints": ["scroll first"], "known_blockers": ["captcha"],
                           "anti_patterns": ["double click"], "verified": False}),
    ("POST", "/v1/episodes/{episode}/label", {"success": True, "label_source": "judge", "verified": False}),
    ("POST", "/v1/admin/keys", {"namespace": "fleet-x", "role": "writer", "admin": False}),
]
# (path, params): the query parameters that carry text
QUERIES: list[tuple[str, dict[str, str]]] = [
    ("/v1/experience", {"url": "https://shop.example.com/p/1", "intent": "buy"}),
    ("/v1/episodes", {"domain": "shop.example.com"}),
    ("/v1/events", {"type": "facts_merged"}),
]
ENUMS = {"label_source", "source", "category", "role", "ts"}  # Literal and datetime fields: validation answers first


def leaves(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """(path, value) of every scalar in a JSON document; dict keys appear as ("key", name) pseudo-leaves."""
    if isinstance(value, dict):
        for key, item in value.items():
            if path and path[-1] == "tags":
                yield path + (("key", key),), key
            yield from leaves(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from leaves(item, path + (i,))
    else:
        yield path, value


def replaced(body: dict, path: tuple, value: Any) -> dict:
    """A deep copy of `body` with the leaf at `path` set to `value` (a ("key", name) leaf renames the key)."""
    out = copy.deepcopy(body)
    node = out
    for part in path[:-1]:
        node = node[part]
    last = path[-1]
    if isinstance(last, tuple):
        node[value] = node.pop(last[1])
    else:
        node[last] = value
    return out


def name_of(path: tuple) -> str:
    """The field name a leaf is checked under (a list item under its list's name, a tag key as `tags_key`)."""
    last = path[-1]
    if isinstance(last, tuple):
        return "tags_key"
    return next(p for p in reversed(path) if isinstance(p, str))


def census(client) -> dict[str, int]:  # client: a TestClient
    """Rows per table (every table the migrations made)."""
    rt = client.app.state.runtime
    with rt.db.session() as s:
        return {t.name: int(s.scalar(select(func.count()).select_from(t)) or 0) for t in Base.metadata.sorted_tables}


def raw_json(obj: Any) -> bytes:
    """JSON with every non-ASCII character escaped (a lone surrogate travels as `\\udfff`, as a client sends it)."""
    return json.dumps(obj, ensure_ascii=True).encode("ascii")


def prepare(client, path: str, headers: dict | None = None) -> str:
    """Fill the ids a path template needs with fresh rows."""
    if "{session}" in path:
        sid = client.post("/v1/sessions", json=PARTIAL, headers=headers).json()["id"]
        path = path.replace("{session}", sid)
    if "{episode}" in path:
        run = replaced(RUN, ("task",), f"Buy the blue kettle {len(path)} {id(path)}")
        eid = client.post("/v1/episodes", json=run, headers=headers).json()["id"]
        path = path.replace("{episode}", str(eid))
    return path


def assert_error(r, status: int, error: str | None = None) -> dict:
    """The documented error body with this status."""
    assert r.status_code == status, (r.status_code, r.text[:400])
    body = r.json()
    assert set(body) == {"error", "detail", "request_id"} and body["detail"] and body["request_id"], body
    if error is not None:
        assert body["error"] == error, body
    return body
