"""Credentials under attack (SQLite and PostgreSQL): a flood of unknown keys never touches the database and is
cut off with 429 while valid keys keep working; more than one credential is refused; /readyz tells only its
status to anyone but an admin."""

from __future__ import annotations

import itertools
import secrets

import pytest
from sqlalchemy import event

from tests.reliability.catalogue import RUN, assert_error, census

MAX_FAILURES = 20  # the default EMS_LIMITS__MAX_AUTH_FAILURES


@pytest.fixture
def keys(settings, make_client):
    # the background loops (key refresh, index follow, snapshots) stay quiet, so every SQL statement and key
    # table load counted below comes from the requests
    settings.replica.follow_every_s = settings.index.snapshot_every_s = 3600
    with make_client(settings) as client:
        rt = client.app.state.runtime
        out = {role: rt.keys.create(namespace="fleet", role=role)[1] for role in ("admin", "writer", "verifier")}
        _, out["revoked"] = rt.keys.create(namespace="fleet", role="admin")
        rt.keys.revoke(out["revoked"])
        yield client, out


class _Statements:
    """Counts SQL statements sent to the database while active."""

    def __init__(self, engine) -> None:
        self.engine, self.n = engine, 0

    def _count(self, *args) -> None:
        self.n += 1

    def __enter__(self) -> _Statements:
        event.listen(self.engine, "before_cursor_execute", self._count)
        return self

    def __exit__(self, *exc) -> None:
        event.remove(self.engine, "before_cursor_execute", self._count)


def test_a_flood_of_unknown_keys_never_reaches_the_database(keys):
    """Unknown keys are answered from memory (no reload of the key table, no SQL at all); past the limit the
    address gets 429 with Retry-After, without a lookup; a valid key from the same address still works."""
    client, k = keys
    rt = client.app.state.runtime
    loads = rt.keys.loads
    statuses = []
    with _Statements(rt.db.engine) as sql:
        for i in range(300):
            key = "ems_" + secrets.token_urlsafe(32)
            headers = {"Authorization": f"Bearer {key}"} if i % 2 else {"X-API-Key": key}
            r = client.get("/v1/stats", headers=headers)
            statuses.append(r.status_code)
            if r.status_code == 429:
                assert int(r.headers["retry-after"]) >= 1
                assert_error(r, 429, "TooManyRequests")
    assert sql.n == 0, f"{sql.n} SQL statements for unknown keys"
    assert rt.keys.loads == loads, "an unknown key reloaded the key table"
    assert statuses[:MAX_FAILURES] == [401] * MAX_FAILURES and set(statuses[MAX_FAILURES:]) == {429}
    assert client.get("/v1/stats", headers={"Authorization": f"Bearer {k['writer']}"}).status_code == 200
    assert_error(client.get("/v1/stats", headers={"Authorization": f"Bearer {k['revoked']}"}), 403, "Forbidden")


def test_keys_made_elsewhere_are_picked_up_by_the_refresh_not_by_misses(keys):
    """Another process's new key: unknown until the key table is refreshed (the follower thread does it every
    EMS_REPLICA__FOLLOW_EVERY_S), then valid; the miss itself loads nothing."""
    client, _ = keys
    rt = client.app.state.runtime
    from ems_service.keys import KeyRing
    from ems_service.repositories import KeyRepository

    other = KeyRing(KeyRepository(rt.db))  # as `webcoach keys create` in another process
    _, key = other.create(namespace="fleet", role="writer")
    rt.keys.refresh()
    assert client.get("/v1/stats", headers={"Authorization": f"Bearer {key}"}).status_code == 200


def _credential_headers(k: dict) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {k['writer']}"), ("authorization", f"Bearer {k['admin']}"),
            ("authorization", "Bearer ems_unknown_key_0123456789"), ("x-api-key", k["writer"]),
            ("x-api-key", k["admin"]), ("x-api-key", "ems_unknown_key_0123456789"),
            ("authorization", f"Basic {k['writer']}"), ("Authorization", f"Bearer {k['verifier']}")]


def test_more_than_one_credential_is_refused(keys):
    """Every pair of credential headers (the same one twice too, any order): 400 AmbiguousCredentials, nothing
    written, on a write route, a read route and /readyz."""
    client, k = keys
    creds = _credential_headers(k)
    pairs = list(itertools.product(creds, repeat=2))
    failures = []
    for (n1, v1), (n2, v2) in pairs:
        for method, path, body in (("POST", "/v1/episodes", RUN), ("GET", "/v1/stats", None), ("GET", "/readyz", None)):
            before = census(client)
            r = client.request(method, path, json=body, headers=[(n1, v1), (n2, v2)])
            if r.status_code != 400 or r.json()["error"] != "AmbiguousCredentials" or census(client) != before:
                failures.append((n1, v1[:12], n2, v2[:12], path, r.status_code))
    assert not failures, failures[:10]
    assert len(pairs) * 3 >= 150
    assert client.get("/v1/stats", headers={"authorization": f"Bearer {k['writer']}"}).status_code == 200


def test_readyz_shows_namespaces_to_admins_only(keys):
    client, k = keys
    client.post("/v1/episodes", json=RUN, headers={"Authorization": f"Bearer {k['writer']}"})
    for who in (None, "writer", "verifier", "revoked", "unknown"):
        headers = {} if who is None else {"Authorization": f"Bearer {k.get(who, 'ems_unknown_key_0123456789')}"}
        r = client.get("/readyz", headers=headers)
        assert r.status_code == 200 and r.json() == {"status": "ready"}, (who, r.text)
    r = client.get("/readyz", headers={"Authorization": f"Bearer {k['admin']}"})
    assert r.json()["status"] == "ready" and r.json()["indexes"]["fleet"] == 1


def test_readyz_in_embedded_mode_shows_the_one_namespace(client):
    assert "indexes" in client.get("/readyz").json()
