"""The dashboard over HTTP on both databases (no browser): the login and its cookie, the security headers, bad
input, namespaces, and that looking at memory changes nothing in it."""

from __future__ import annotations

import pytest

from ems_service.sessions import risk_trace
from ems_service.ui.app import CSP

RUN = {"task": "Find <script>alert(1)</script> cheap flights to Oslo", "start_url": "https://www.kayak.com/flights",
       "outcome": {"success": False}, "steps": [{"action": "click('Search')", "error": "<img src=x onerror=alert(2)>"}]}


def h(key: str) -> dict:
    return {"X-API-Key": key}


@pytest.fixture
def keyed(client):
    rt = client.app.state.runtime
    keys = {"a": rt.keys.create(namespace="fleet-a")[1], "b": rt.keys.create(namespace="fleet-b")[1]}
    return client, keys


def login(client, key: str):
    return client.post("/ui/login", data={"key": key}, follow_redirects=False)


def test_login_sets_a_strict_httponly_cookie_and_the_api_ignores_it(keyed):
    client, keys = keyed
    r = client.get("/ui/episodes", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/login"
    r = login(client, keys["a"])
    assert r.status_code == 303 and r.headers["location"] == "/ui/"
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie and "Secure" not in cookie
    assert "fleet-a" in client.get("/ui/").text
    # the cookie is the dashboard's: the API still wants its header
    assert client.get("/v1/stats").status_code == 401
    r = client.post("/ui/logout", follow_redirects=False)
    assert r.status_code == 303 and "Max-Age=0" in r.headers["set-cookie"]
    assert client.get("/ui/", follow_redirects=False).status_code == 303


def test_unknown_keys_are_refused_and_limited(make_client, settings):
    limited = settings.model_copy(update={"limits": settings.limits.model_copy(update={"max_auth_failures": 3})})
    with make_client(limited) as client:
        client.app.state.runtime.keys.create(namespace="fleet-a")
        statuses = [login(client, f"ems_guess_{i}").status_code for i in range(5)]
        assert statuses == [401, 401, 401, 429, 429]
        assert "Too many unknown keys" in login(client, "ems_guess").text
        assert "set-cookie" not in login(client, "ems_guess").headers


def test_forged_and_malformed_logins_are_4xx(keyed):
    client, keys = keyed
    r = client.post("/ui/login", data={"key": keys["a"]}, headers={"Origin": "http://evil.example"},
                    follow_redirects=False)
    assert r.status_code == 403 and "set-cookie" not in r.headers
    assert client.post("/ui/login", json={"key": keys["a"]}).status_code == 400
    assert client.post("/ui/login", content=b"key=" + b"x" * 5000,
                       headers={"Content-Type": "application/x-www-form-urlencoded"}).status_code == 413
    assert client.post("/ui/login", content=b"key=%ff%fe",
                       headers={"Content-Type": "application/x-www-form-urlencoded"}).status_code == 401
    assert client.get("/ui/logout").status_code == 405


def test_a_revoked_key_is_logged_out(keyed):
    client, keys = keyed
    login(client, keys["a"])
    client.app.state.runtime.keys.revoke(keys["a"])
    r = client.get("/ui/", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/login?reason=revoked"
    assert "Max-Age=0" in r.headers["set-cookie"]
    r = login(client, keys["a"])
    assert r.status_code == 403 and "revoked" in r.text


def test_embedded_mode_needs_no_login(client):
    r = client.get("/ui/")
    assert r.status_code == 200 and "embedded mode" in r.text and "Log out" not in r.text
    assert client.get("/ui/login", follow_redirects=False).headers["location"] == "/ui/"


@pytest.mark.parametrize("path", ["/ui/login", "/ui/", "/ui/static/dashboard.css", "/ui/nowhere"])
def test_security_headers_on_every_response(client, path):
    r = client.get(path)
    assert r.headers["content-security-policy"] == CSP
    assert "script-src" not in CSP and "'unsafe-inline'" not in CSP  # default-src 'none': no script at all
    assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY"
    assert r.headers["x-request-id"]
    if not path.startswith("/ui/static/"):
        assert r.headers["cache-control"] == "no-store" and r.headers["content-type"].startswith("text/html")


def test_stored_markup_is_escaped(keyed):
    client, keys = keyed
    episode_id = client.post("/v1/episodes", json=RUN, headers=h(keys["a"])).json()["id"]
    login(client, keys["a"])
    for path in (f"/ui/episodes/{episode_id}", "/ui/episodes", "/ui/search?q=cheap+flights+to+Oslo"):
        html = client.get(path).text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, path
        assert "<script" not in html and "<img" not in html, path


def test_bad_input_is_a_clear_4xx_page(keyed):
    client, keys = keyed
    login(client, keys["a"])
    cases = {"/ui/episodes?cursor=abc": (400, "cursor"), "/ui/episodes?limit=9999": (413, "EMS_LIMITS__MAX_PAGE"),
             "/ui/episodes?limit=0": (422, "limit"), "/ui/episodes?outcome=maybe": (422, "outcome"),
             "/ui/episodes/0": (422, "episode_id"), "/ui/episodes/99": (404, "does not exist"),
             "/ui/search?q=" + "x" * 20_001: (413, "EMS_LIMITS__MAX_FIELD_CHARS"),
             "/ui/search?q=x&k=101": (413, "EMS_LIMITS__MAX_K"),
             "/ui/sessions/" + "s" * 300: (413, "EMS_LIMITS__MAX_NAME_CHARS"),
             "/ui/experience?url=not-a-url": (400, "has no host")}
    for path, (status, words) in cases.items():
        r = client.get(path)
        assert (r.status_code, r.headers["content-type"][:9]) == (status, "text/html"), (path, r.status_code)
        assert words in r.text, (path, r.text[-600:])


def test_namespaces_never_mix(keyed):
    client, keys = keyed
    a_id = client.post("/v1/episodes", json=RUN, headers=h(keys["a"])).json()["id"]
    a_session = client.post("/v1/sessions", json={"task": "fleet A live run"}, headers=h(keys["a"])).json()["id"]
    login(client, keys["b"])
    assert client.get(f"/ui/episodes/{a_id}").status_code == 404
    assert client.get(f"/ui/sessions/{a_session}").status_code == 404
    assert "fleet A live run" not in client.get("/ui/sessions").text
    assert "Oslo" not in client.get("/ui/episodes").text
    assert "kayak.com" not in client.get("/ui/search?q=cheap+flights+to+Oslo").text
    login(client, keys["a"])
    assert "fleet A live run" in client.get("/ui/sessions").text


def test_looking_changes_nothing(keyed):
    """Dashboard reads are not retrievals (eviction by use must not see them) and leave no memory events."""
    client, keys = keyed
    rt = client.app.state.runtime
    episode_id = client.post("/v1/episodes", json=RUN, headers=h(keys["a"])).json()["id"]
    events = client.get("/v1/events", headers=h(keys["a"])).json()["items"]
    login(client, keys["a"])
    for path in (f"/ui/episodes/{episode_id}", "/ui/search?q=flights", "/ui/lessons",
                 "/ui/experience?url=https://www.kayak.com/flights"):
        assert client.get(path).status_code == 200, path
    rt.retrieval.flush_touches()
    assert client.get(f"/v1/episodes/{episode_id}", headers=h(keys["a"])).json()["retrieval_count"] == 0
    assert client.get("/v1/events", headers=h(keys["a"])).json()["items"] == events


def test_a_session_keeps_the_risk_it_was_told(keyed):
    client, keys = keyed
    sid = client.post("/v1/sessions", json={"task": "Buy a lamp", "start_url": "https://shop.example/"},
                      headers=h(keys["a"])).json()["id"]
    stuck = {"action": "click('Buy')", "error": "element not found: Buy"}
    told = [client.post(f"/v1/sessions/{sid}/steps", json={"steps": [stuck]}, headers=h(keys["a"])).json()
            for _ in range(4)]
    assert any(t["guidance"] for t in told), "a run stuck on one failing click draws guidance"
    record = client.app.state.runtime.sessions.get(namespace="fleet-a", session_id=sid)
    trace = risk_trace(record)
    assert [p["n_steps"] for p in trace] == [1, 2, 3, 4]
    assert [p["intervene"] for p in trace] == [t["guidance"] is not None for t in told]
    assert [p["advice"] for p in trace if p["intervene"]] == [t["guidance"]["advice"] for t in told if t["guidance"]]
    login(client, keys["a"])
    html = client.get(f"/ui/sessions/{sid}").text
    assert html.count("<circle") == 4
