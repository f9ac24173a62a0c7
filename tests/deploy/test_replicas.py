"""Two real API processes on one PostgreSQL: a write on one is searchable on the other within 2 s, and a
delete disappears within 2 s."""

from __future__ import annotations

import time

import httpx

from tests.deploy.test_compose import _free_port, start_server

ADMIN = {"Authorization": "Bearer test-admin-key-0123456789"}


def _wait(check, timeout: float = 2.0) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if check():
            return time.perf_counter() - started
        time.sleep(0.05)
    raise AssertionError(f"not propagated within {timeout} s")


def test_writes_and_deletes_propagate(pg_env, tmp_path):
    pg_env = dict(pg_env, EMS_REPLICA__FOLLOW_EVERY_S="0.25")
    ports = [_free_port(), _free_port()]
    procs = [start_server(pg_env, p, tmp_path) for p in ports]
    try:
        a, b = (httpx.Client(base_url=f"http://127.0.0.1:{p}", headers=ADMIN, timeout=10) for p in ports)
        for i in range(5):
            task = f"Replica check number {i}: order the green teapot"
            eid = a.post("/v1/episodes", json={"task": task, "start_url": "https://tea.example.com",
                                               "steps": [{"action": f"click[{i}]"}]}).json()["id"]

            def visible(eid=eid, task=task) -> bool:
                hits = b.post("/v1/search", json={"text": task, "k": 3}).json()["results"]
                return eid in [h["id"] for h in hits]

            _wait(visible)
            assert b.get(f"/v1/episodes/{eid}").status_code == 200
            assert a.delete(f"/v1/episodes/{eid}").status_code == 204
            _wait(lambda eid=eid, v=visible: not v(eid))
            # and the vector itself leaves the other replica's index within 2 s
            _wait(lambda: b.get("/v1/stats").json()["index_size"] == 0)
        assert b.get("/v1/stats").json()["episodes"] == 0
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=30)
