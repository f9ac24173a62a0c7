"""Generated bad-input catalogues, one per class, on SQLite and PostgreSQL: every string field of every route over
its named limit, every string field with a lone surrogate, every cursor that is not one, every loosely typed
value, every body that is not JSON. Each is a documented 4xx with {error, detail, request_id}, nothing is written,
and the service still answers afterwards."""

from __future__ import annotations

import sys
from collections import Counter

import pytest

from condenser import Trajectory
from ems_service import Settings
from ems_service.config import LimitSettings
from ems_service.errors import ValidationFailed
from ems_service.limits import DEFAULT_TEXT, TEXT_LIMITS, Limits, env_name
from tests.reliability.catalogue import (
    BODIES,
    ENUMS,
    PARTIAL,
    QUERIES,
    RUN,
    STEP,
    assert_error,
    census,
    leaves,
    name_of,
    prepare,
    raw_json,
    replaced,
)

JSON = {"content-type": "application/json"}
# small limits, so an over-long value is a small request
LIMITS = LimitSettings(max_field_chars=100, max_task_chars=60, max_url_chars=120, max_tag_chars=50,
                       max_lesson_chars=80, max_item_chars=40, max_items=5, max_tags=4, max_body_bytes=6_000)
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "a\udfffb", "\udfff\ud800", "\ud800\ud800", "kettle \udc80"]
CATALOGUE_SIZES: Counter[str] = Counter()  # cases per class, printed for the README table


@pytest.fixture
def small(db_url, tmp_path, make_client):
    settings = Settings(database_url=db_url, data_dir=tmp_path / "data", limits=LIMITS, _env_file=None)
    with make_client(settings) as c:
        yield c


def _setting_for(path: tuple) -> str:
    name = name_of(path)
    if name == "tags_key":
        return "max_name_chars"
    if "tags" in path:
        return "max_tag_chars"
    return TEXT_LIMITS.get(name, DEFAULT_TEXT)


def _too_long(path: tuple, value: str, limit: int) -> str:
    """A value one character over `limit`, still shaped like the original (a url stays a url)."""
    return value + "x" * (limit + 1 - len(value))


def limit_cases() -> list[tuple[str, str, dict, str, str]]:
    """(method, path, body, leaf, setting) for every string leaf of every body, one over its limit."""
    cases = []
    for method, path, body in BODIES:
        for leaf, value in leaves(body):
            if not isinstance(value, str) or name_of(leaf) in ENUMS:
                continue
            setting = _setting_for(leaf)
            limit = getattr(LIMITS, setting)
            cases.append((method, path, replaced(body, leaf, _too_long(leaf, value, limit)), repr(leaf), setting))
    return cases


def test_every_string_field_has_a_named_limit(small):
    """413 LimitExceeded naming EMS_LIMITS__<SETTING>, the same on both databases, nothing written."""
    failures = []
    cases = limit_cases()
    for method, template, body, leaf, setting in cases:
        path = prepare(small, template)
        before = census(small)
        r = small.request(method, path, content=raw_json(body), headers=JSON)
        if r.status_code != 413 or env_name(setting) not in r.json().get("detail", ""):
            failures.append((template, leaf, r.status_code, r.text[:200]))
        elif census(small) != before:
            failures.append((template, leaf, "wrote something"))
    for path, params in QUERIES:
        for name, value in params.items():
            setting = TEXT_LIMITS.get(name, DEFAULT_TEXT)
            before = census(small)
            r = small.get(path, params={**params, name: _too_long((name,), value, getattr(LIMITS, setting))})
            cases.append((path, name))
            if r.status_code != 413 or env_name(setting) not in r.text:
                failures.append((path, name, r.status_code, r.text[:200]))
    CATALOGUE_SIZES["field limits"] = len(cases)
    assert not failures, failures
    assert len(cases) >= 60


def test_the_schema_has_no_string_field_the_catalogue_misses(small):
    """Every string property of every request body in the OpenAPI spec appears in a catalogue body."""
    spec = small.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    covered = {name_of(leaf) for _, _, body in BODIES for leaf, v in leaves(body) if isinstance(v, str)}
    covered |= {"tags"}

    def strings(schema: dict, seen: set) -> set[str]:
        out = set()
        for prop, sub in (schema.get("properties") or {}).items():
            kinds = [sub] + sub.get("anyOf", []) + sub.get("allOf", [])
            for kind in kinds:
                ref = kind.get("$ref") or (kind.get("items") or {}).get("$ref")
                if kind.get("type") == "string" or (kind.get("items") or {}).get("type") == "string":
                    out.add(prop)
                if ref and ref not in seen:
                    seen.add(ref)
                    out |= strings(schemas[ref.rsplit("/", 1)[1]], seen)
        return out

    found = set()
    for ops in spec["paths"].values():
        for op in ops.values():
            ref = (op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema") or {}).get("$ref")
            if ref:
                found |= strings(schemas[ref.rsplit("/", 1)[1]], {ref})
    missing = found - covered - {"episodes"}  # batch items are runs: checked item by item (batch test)
    assert not missing, f"string fields without a catalogue case: {missing}"


def test_one_over_long_item_fails_alone_in_a_batch_on_both_databases(client):
    """Per-item results: the item over a limit (a column PostgreSQL would refuse) gets its error, the others
    are stored, on either database; the documented batch semantics."""
    items = [replaced(RUN, ("task",), f"Buy kettle {i}") for i in range(5)]
    items[1] = replaced(items[1], ("agent",), "a" * 256)
    items[3] = replaced(items[3], ("outcome", "status"), "s" * 65)
    r = client.post("/v1/episodes:batch", json={"episodes": items})
    assert r.status_code == 200, r.text
    res = r.json()["results"]
    assert [x["id"] is not None for x in res] == [True, False, True, False, True]
    assert "EMS_LIMITS__MAX_NAME_CHARS" in res[1]["error"] and "EMS_LIMITS__MAX_LABEL_CHARS" in res[3]["error"]
    assert client.get("/v1/stats").json()["episodes"] == 3


def test_a_row_the_database_refuses_fails_alone_in_a_batch(client, monkeypatch):
    """When the database refuses one row of a multi-row INSERT, the batch falls back to one insert per run."""
    episodes = client.app.state.runtime.episodes
    real = episodes.insert

    def refusing(episodes, vectors, model):  # a fake database refusal
        if any(ep.task == "refuse me" for ep in episodes):
            raise ValidationFailed("the database refused a value: DataError")
        return real(episodes, vectors, model)

    monkeypatch.setattr(episodes, "insert", refusing)
    items = [replaced(RUN, ("task",), t) for t in ("first", "refuse me", "third")]
    res = client.post("/v1/episodes:batch", json={"episodes": items}).json()["results"]
    assert res[0]["id"] and res[2]["id"] and res[1]["id"] is None and "refused" in res[1]["error"]
    assert client.get("/v1/stats").json()["episodes"] == 2
    assert set(client.app.state.runtime.vectors.ids("default")) == {res[0]["id"], res[2]["id"]}


def surrogate_cases() -> list[tuple[str, str, dict, str]]:
    cases = []
    for method, path, body in BODIES:
        string_leaves = [leaf for leaf, v in leaves(body) if isinstance(v, str)]
        for i, leaf in enumerate(string_leaves):
            for j, bad in enumerate(SURROGATES):
                if (i + j) % 3 == 0 or name_of(leaf) in {"action", "selectors", "task"}:
                    value = bad if isinstance(leaf[-1], tuple) else dict(leaves(body))[leaf] + bad
                    cases.append((method, path, replaced(body, leaf, value), f"{leaf!r} {bad!r}"))
    return cases


def test_lone_surrogates_are_a_422_at_the_edge_and_nothing_is_written(client):
    """A lone surrogate anywhere (values, object keys, batch items): 422 before any route runs; the facts row is
    not committed, and every later read of the domain still answers."""
    cases = surrogate_cases()
    cases += [("POST", "/v1/episodes:batch", {"episodes": [RUN, replaced(RUN, ("steps", 0, "action"), "a\udfff")]},
               "batch item"),
              ("POST", "/v1/episodes:batch", {"episodes": [RUN], "\udfff": 1}, "batch key")]
    failures = []
    for method, template, body, leaf in cases:
        path = prepare(client, template)
        before = census(client)
        r = client.request(method, path, content=raw_json(body), headers=JSON)
        if r.status_code != 422 or r.json()["error"] != "ValidationFailed" or "surrogate" not in r.json()["detail"]:
            failures.append((template, leaf, r.status_code, r.text[:200]))
        elif census(client) != before:
            failures.append((template, leaf, "wrote something"))
    CATALOGUE_SIZES["lone surrogates"] = len(cases)
    assert not failures, failures[:10]
    assert len(cases) >= 150
    assert client.get("/v1/experience", params={"url": "https://shop.example.com/p/1"}).status_code == 200
    assert client.post("/v1/facts", json={"domain": "shop.example.com", "selectors": ["#ok"]}).status_code == 200
    assert client.get("/v1/experience", params={"url": "https://shop.example.com/p/1"}).json()["facts"]["selectors"]
    # escaped surrogate pairs are characters, not lone surrogates: accepted
    pair = raw_json(replaced(RUN, ("task",), "Buy the kettle \U0001f600"))
    assert b"\\ud83d\\ude00" in pair
    assert client.post("/v1/episodes", content=pair, headers=JSON).status_code == 201


def test_the_models_refuse_lone_surrogates_outside_http_too():
    """The CLI and importers build the same models: a surrogate there is a validation error, never a crash."""
    for bad in SURROGATES:
        for body in (replaced(RUN, ("task",), bad), replaced(RUN, ("steps", 0, "observation"), bad),
                     replaced(RUN, ("tags", ("key", "team")), bad), replaced(RUN, ("tags", "team"), bad)):
            with pytest.raises(ValueError, match="surrogate"):
                Trajectory.model_validate(body)


def _non_ascii_digits() -> list[str]:
    """Every character `str.isdigit` calls a digit that is not an ASCII digit ('²', '٣', '𝟗', ...)."""
    return [chr(c) for c in range(128, sys.maxunicode + 1) if chr(c).isdigit()]


def cursor_cases() -> list[str]:
    digits = _non_ascii_digits()
    cases = digits + ["1" + d for d in digits[::7]] + [d * 3 for d in digits[::11]]
    cases += ["9" * 20, "9" * 5000, str(2**63), str(2**64), "-1", "+1", " 1", "1 ", "0x10", "1e3", "1_000", "1.0",
              "", "１２", "\u0661\u0662", "1\x00", "NaN", "null", "[1]"]
    return cases


def test_cursors_that_are_not_ids_are_400(client):
    cases = cursor_cases()
    failures = []
    for cursor in cases:
        for path in ("/v1/episodes", "/v1/events"):
            r = client.get(path, params={"cursor": cursor})
            ok = r.status_code == 400 and r.json()["error"] == "BadRequest" if cursor != "1\x00" else r.status_code == 422
            if not ok:
                failures.append((path, cursor[:20], r.status_code))
    CATALOGUE_SIZES["cursors"] = len(cases) * 2
    assert not failures, failures[:20]
    assert len(_non_ascii_digits()) > 500
    for good in ("0", "1", str(2**63 - 1)):
        assert client.get("/v1/episodes", params={"cursor": good}).status_code == 200
        assert client.get("/v1/events", params={"cursor": good}).status_code == 200


LOOSE = {"bool": ["true", "false", "yes", "no", "1", "0", "on", 1, 0, 1.0, [], {}],
         "int": ["5", "5.0", 5.5, True, False, "1e1", [5]],
         "float": ["0.5", True, False, "NaN", "1e-1", [0.5]]}


def coercion_cases() -> list[tuple[str, str, dict, str]]:
    cases = []
    kinds = {bool: "bool", int: "int", float: "float"}
    for method, path, body in BODIES:
        for leaf, value in leaves(body):
            kind = kinds.get(type(value))
            if kind is None:
                continue
            for loose in LOOSE[kind]:
                cases.append((method, path, replaced(body, leaf, loose), f"{leaf!r}={loose!r}"))
    return cases


def test_loose_types_are_refused(client):
    """`"success": "yes"`, `"k": "5"`, `"k": true`, `"reward": "0.5"`: 422 on every bool and number field."""
    cases = coercion_cases()
    failures = []
    for method, template, body, leaf in cases:
        path = prepare(client, template)
        before = census(client)
        r = client.request(method, path, content=raw_json(body), headers=JSON)
        if r.status_code != 422 or r.json()["error"] != "ValidationFailed":
            failures.append((template, leaf, r.status_code, r.text[:160]))
        elif census(client) != before:
            failures.append((template, leaf, "wrote something"))
    CATALOGUE_SIZES["loose types"] = len(cases)
    assert not failures, failures[:20]
    assert len(cases) >= 80
    # an integer is a number: reward 1 stays allowed
    assert client.post("/v1/episodes", json=replaced(RUN, ("steps", 0, "reward"), 1)).status_code == 201


BAD_TYPES = ["text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded",
             "multipart/form-data; boundary=x", "application/xml", "text/json", "text/html", "image/png",
             "application/octet-stream", "application/json; charset=latin-1", "application/json; charset=utf-16",
             "application/jsonx", "application/json, text/plain", "json", "*/*", "application/*"]
GOOD_TYPES = ["application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8",
              "APPLICATION/JSON", "application/vnd.api+json", "application/json; charset=\"utf-8\""]
BAD_ENCODINGS = ["gzip", "deflate", "br", "zstd", "compress", "x-gzip", "gzip, identity", "identity, gzip", "*",
                 "GZIP", "chunked"]


def test_bodies_that_are_not_plain_json_are_415(client):
    failures = []
    n = 0
    for method, template, body in BODIES:
        for content_type in BAD_TYPES:
            path = prepare(client, template)
            before = census(client)
            r = client.request(method, path, content=raw_json(body), headers={"content-type": content_type})
            n += 1
            if r.status_code != 415 or r.json()["error"] != "UnsupportedMediaType" or census(client) != before:
                failures.append((template, content_type, r.status_code))
    for encoding in BAD_ENCODINGS:
        before = census(client)
        r = client.post("/v1/episodes", content=raw_json(RUN), headers={**JSON, "content-encoding": encoding})
        n += 1
        if r.status_code != 415 or census(client) != before:
            failures.append(("content-encoding", encoding, r.status_code))
    CATALOGUE_SIZES["media types"] = n
    assert not failures, failures[:20]
    for i, content_type in enumerate(GOOD_TYPES):
        body = raw_json(replaced(RUN, ("task",), f"Buy the kettle {i}"))
        assert client.post("/v1/episodes", content=body, headers={"content-type": content_type}).status_code == 201
    r = client.post("/v1/episodes", content=raw_json(replaced(RUN, ("task",), "no type")))  # FastAPI would 422
    assert_error(r, 415, "UnsupportedMediaType")
    assert client.post("/v1/episodes", content=raw_json(replaced(RUN, ("task",), "identity")),
                       headers={**JSON, "content-encoding": "identity"}).status_code == 201


def test_session_appends_keep_the_limits_and_a_session_can_always_finish(small):
    """Every step field at append is held to its limit (413, the session unchanged); the run as a whole may
    not outgrow one posted run (EMS_LIMITS__MAX_BODY_BYTES); and then the session still finishes."""
    n = 0
    for field in ("url", "observation", "thought", "action", "error"):
        sid = small.post("/v1/sessions", json=PARTIAL).json()["id"]
        setting = TEXT_LIMITS.get(field, DEFAULT_TEXT)
        for at in range(3):  # the bad step first, second and third in the append
            over = STEP | {field: _too_long((field,), STEP[field], getattr(LIMITS, setting))}
            steps = [STEP] * at + [over]
            before = small.get(f"/v1/sessions/{sid}").json()["n_steps"]
            r = small.post(f"/v1/sessions/{sid}/steps", json={"steps": steps})
            n += 1
            body = assert_error(r, 413, "LimitExceeded")
            assert env_name(setting) in body["detail"]
            assert small.get(f"/v1/sessions/{sid}").json()["n_steps"] == before
        assert small.post(f"/v1/sessions/{sid}/finish", json={"outcome": {"success": False}}).status_code == 200
    sid = small.post("/v1/sessions", json=PARTIAL).json()["id"]
    big = STEP | {"observation": "o" * 100, "thought": "t" * 100}
    codes = [small.post(f"/v1/sessions/{sid}/steps", json={"steps": [big]}).status_code for _ in range(40)]
    assert 413 in codes and set(codes) == {200, 413}, codes
    last = small.post(f"/v1/sessions/{sid}/steps", json={"steps": [big]})
    assert "EMS_LIMITS__MAX_BODY_BYTES" in assert_error(last, 413, "LimitExceeded")["detail"]
    finished = small.post(f"/v1/sessions/{sid}/finish", json={"outcome": {"success": False}})
    assert finished.status_code == 200, finished.text
    CATALOGUE_SIZES["session appends"] = n + codes.count(413) + 1


class _Counted(str):
    """A string that counts how often it is compared for equality (the quadratic merge compared every pair)."""

    calls = 0

    def __eq__(self, other: object) -> bool:
        type(self).calls += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_facts_merge_is_linear_and_limited(small):
    rt = small.app.state.runtime
    rt.experience.limits = Limits(LIMITS.model_copy(update={"max_items": 20_000}))
    values = [_Counted(f"#sel-{i}") for i in range(5_000)]
    _Counted.calls = 0
    rt.experience.merge_facts("default", domain="big.example.com", intent="other", facts={"selectors": values})
    rt.experience.merge_facts("default", domain="big.example.com", intent="other", facts={"selectors": values})
    assert _Counted.calls < 4 * len(values), _Counted.calls  # the list merge made ~n^2/2 = 12.5M comparisons
    rt.experience.limits = rt.limits
    # over the limit in one request (the request's list) and by merging (the stored entry): 413, nothing written
    n = 0
    for key in ("selectors", "interaction_hints", "known_blockers", "anti_patterns"):
        before = census(small)
        r = small.post("/v1/facts", json={"domain": "shop.example.com", key: [f"v{i}" for i in range(6)]})
        n += 1
        assert "EMS_LIMITS__MAX_ITEMS" in assert_error(r, 413, "LimitExceeded")["detail"]
        assert census(small) == before
        assert small.post("/v1/facts", json={"domain": "shop.example.com", key: ["a", "b", "c"]}).status_code == 200
        assert small.post("/v1/facts", json={"domain": "shop.example.com", key: ["c", "b", "a"]}).status_code == 200
        before = census(small)
        r = small.post("/v1/facts", json={"domain": "shop.example.com", key: ["d", "e", "f"]})
        n += 1
        assert "would hold 6 items" in assert_error(r, 413, "LimitExceeded")["detail"]
        assert census(small) == before
    facts = small.get("/v1/experience", params={"url": "https://shop.example.com/"}).json()["facts"]
    assert facts["selectors"] == ["a", "b", "c"]  # first-seen order, no duplicates
    CATALOGUE_SIZES["facts limits"] = n


def test_catalogue_sizes_are_reported():
    print("catalogue sizes:", dict(CATALOGUE_SIZES))


def _asgi(app, headers: list[tuple[bytes, bytes]], body: bytes) -> tuple[int, dict]:
    """One raw ASGI request (headers exactly as given: no client library fixes them up)."""
    import asyncio
    import json

    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/v1/episodes", "raw_path": b"/v1/episodes", "query_string": b"", "root_path": "",
             "headers": headers, "client": ("192.0.2.1", 5000), "server": ("testserver", 80)}
    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, json.loads(b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body"))


BAD_LENGTHS = ["\u00b2", "\u0663", "-1", "+5", "1e3", "0x10", "", " ", "5 5", "9" * 19, "9" * 5000, "1.0", "NaN"]


def test_malformed_content_length_is_400(client):
    body = raw_json(RUN)
    failures = []
    for value in BAD_LENGTHS:
        before = census(client)
        status, err = _asgi(client.app, [(b"content-type", b"application/json"),
                                         (b"content-length", value.encode("utf-8"))], body)
        if status != 400 or err.get("error") != "BadRequest" or census(client) != before:
            failures.append((value[:10], status, err))
    status, err = _asgi(client.app, [(b"content-type", b"application/json"), (b"content-length", b"10"),
                                     (b"content-length", str(len(body)).encode())], body)
    assert status == 400, err
    CATALOGUE_SIZES["content-length"] = len(BAD_LENGTHS) + 1
    assert not failures, failures
    status, _ = _asgi(client.app, [(b"content-type", b"application/json"),
                                   (b"content-length", str(len(body)).encode())], body)
    assert status == 201


def test_facts_and_their_event_are_one_transaction(client, monkeypatch):
    """When the event cannot be written, the merged facts are not committed either (they were before)."""

    def failing(s, namespace, type_, data):  # a failure while writing the event
        raise ValidationFailed("the database refused a value: DataError")

    before = census(client)
    from ems_service.repositories import events as event_log

    monkeypatch.setattr(event_log, "add_event", failing)  # the facts repository writes its event through it
    r = client.post("/v1/facts", json={"domain": "shop.example.com", "selectors": ["#a"]})
    assert_error(r, 422, "ValidationFailed")
    monkeypatch.undo()
    assert census(client) == before
    assert client.get("/v1/experience", params={"url": "https://shop.example.com/"}).json()["facts"] == {}


def test_an_odd_run_in_a_batch_never_costs_the_others_their_lessons(client):
    """A failed 'command' of 100 letters, a recovery navigating to a 300-character host: no lesson from that
    run (it does not fit the lessons table; PostgreSQL used to refuse the batch's lessons), the others are
    learned, on both databases."""
    long_host = "h" * 60 + "." + "o" * 60 + "." + "s" * 60 + "." + "t" * 60 + "." + "x" * 55 + ".com"
    odd = replaced(RUN, ("steps",), [{"action": "a" * 100 + "('#x')", "error": "element not found in the page"},
                                     {"action": f"navigate https://{long_host}/"}])
    odd = replaced(odd, ("outcome",), {"success": True})
    good = replaced(RUN, ("steps",), [{"action": "fill('#q', 'a', 'b')", "error": "fill() got too many arguments"},
                                      {"action": "click('#q')"}, {"action": "type('#q', 'kettle')"}])
    good = replaced(replaced(good, ("task",), "Search for a kettle"), ("outcome",), {"success": True})
    r = client.post("/v1/episodes:batch", json={"episodes": [odd, good]})
    assert all(x["id"] for x in r.json()["results"]), r.text
    events = [e["type"] for e in client.get("/v1/events", params={"limit": 500}).json()["items"]]
    assert "lesson_deduplicated" in events or "lesson_recorded" in events  # the good run's fill lesson
    lessons = client.get("/v1/lessons").json()["lessons"]
    assert all(len(x["failed_command"] or "") <= 64 and len(x["domain"] or "") <= 255 for x in lessons)
