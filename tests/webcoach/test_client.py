"""The SDK against the real service over HTTP, and its retry rules against a scripted local HTTP server."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from coach.models import SystemMessage
from ems_service.dataset import to_trajectory
from tests.conftest import dev_records
from tests.webcoach.conftest import free_port
from webcoach import ApiError, AsyncClient, Client, Guidance, Step, append_guidance


def _failing_run(n_steps: int = 6) -> dict:
    """A real failing webcanvas run, cut to its first steps (a run in progress)."""
    rec = next(r for r in dev_records("webcanvas.jsonl") if r["outcome"]["success"] is False
               and len(r["steps"]) > n_steps)
    traj = to_trajectory(rec).model_dump(mode="json", exclude_none=True)
    traj["steps"] = traj["steps"][:n_steps]
    traj.pop("outcome")
    return traj


def test_memory_and_coaching_round_trip(live_url):
    records = dev_records("webcanvas.jsonl", 80)
    with Client(live_url) as ems:
        first = ems.ingest(to_trajectory(records[0]))
        assert first["deduplicated"] is False and first["id"] > 0
        assert ems.ingest(to_trajectory(records[0]))["deduplicated"] is True  # retry-safe
        results = ems.ingest_batch([to_trajectory(r) for r in records[1:]] + [{"task": "", "steps": []}])
        assert sum(1 for r in results if r.get("id")) == 79 and "error" in results[-1]
        hits = ems.search(records[5]["task"], k=3)
        assert hits[0]["task"] == records[5]["task"]
        assert ems.search(trajectory=to_trajectory(records[5]), k=1, domain=records[5]["domain"])[0]["domain"] \
            == records[5]["domain"]
        assert ems.stats()["episodes"] == 80
        assert ems.episode(first["id"])["task"] == records[0]["task"]

        guidance = ems.coach(_failing_run())
        assert isinstance(guidance, Guidance) and 0 <= guidance.failure_risk <= 1 and guidance.evidence

        session = ems.start_session(task="Find a cheap flight to Boston", start_url="https://www.kayak.com")
        for _i in range(4):
            ems_guidance = session.add_steps([Step(action="click('search')", url="https://www.kayak.com/",
                                                   error="element not found")])
            assert ems_guidance is None or ems_guidance.intervene
        assert session.state()["n_steps"] == 4
        coaching = session.coaching()
        assert coaching.failure_risk > 0.5  # four errors in a row
        finished = session.finish(success=False, status="gave up")
        assert finished["episode_id"] > 0
        assert ems.episode(finished["episode_id"])["success"] is False

        assert isinstance(ems.lessons(), list)
        lesson = ems.add_lesson("Close the cookie banner before searching", domain="kayak.com")
        assert lesson["lesson"].startswith("Close the cookie")
        assert any(item["lesson"] == lesson["lesson"] for item in ems.recall(domain="kayak.com"))
        assert "tier" in ems.experience("https://www.kayak.com/flights", intent="search")

        with pytest.raises(ApiError) as err:
            ems.search("x", k=10_000)
        assert err.value.status == 413 or 400 <= err.value.status < 500
        assert err.value.request_id
        with pytest.raises(ApiError) as err:
            ems.episode(999_999)
        assert err.value.status == 404


def test_async_client_and_append_guidance(live_url):
    records = dev_records("webcanvas.jsonl", 60)

    async def main() -> tuple[Guidance, list[dict], int]:
        async with AsyncClient(live_url) as ems:
            await ems.ingest_batch([to_trajectory(r) for r in records])
            guidance = await ems.coach(_failing_run(8))
            session = await ems.start_session(task=records[0]["task"])
            await session.add_steps([{"action": "click('x')", "error": "timeout"}])
            done = await session.finish(False)
            return guidance, await ems.search(records[1]["task"], k=2), done["episode_id"]

    guidance, hits, episode_id = asyncio.run(main())
    assert hits and episode_id > 0
    messages = [{"role": "system", "content": "You are a web agent."}, {"role": "user", "content": "go"}]
    out = append_guidance(messages, guidance)
    assert messages[-1]["role"] == "user" and len(messages) == 2  # input untouched
    if guidance.intervene:
        assert out[-1] == {"role": "system", "content": guidance.system_message.content}
    else:
        assert out == messages
    forced = guidance.model_copy(update={"intervene": True, "system_message": SystemMessage(content="c")})
    assert append_guidance(messages, forced.model_dump())[-1] == {"role": "system", "content": "c"}
    assert append_guidance(messages, guidance.model_copy(update={"intervene": False})) == messages
    assert append_guidance(messages, None) == messages


class _Scripted(BaseHTTPRequestHandler):
    """Answers each request with the next status of `script` (then 200 {"results": []})."""

    script: list[int] = []
    seen: list[str] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        type(self).seen.append(self.path)
        status = type(self).script.pop(0) if type(self).script else 200
        body = json.dumps({"results": []} if status < 400 else
                          {"error": "scripted", "detail": f"status {status}", "request_id": "r1"}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def scripted():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Scripted.seen = []
    yield server, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_retries_on_5xx_never_on_4xx(scripted):
    _, url = scripted
    _Scripted.script = [503, 500]
    with Client(url, backoff=0.01) as ems:
        assert ems.search("q") == []
    assert len(_Scripted.seen) == 3
    _Scripted.seen, _Scripted.script = [], [422]
    with Client(url, backoff=0.01) as ems, pytest.raises(ApiError) as err:
        ems.search("q")
    assert err.value.status == 422 and err.value.detail == "status 422" and len(_Scripted.seen) == 1
    _Scripted.seen, _Scripted.script = [], [500] * 10
    with Client(url, retries=2, backoff=0.01) as ems, pytest.raises(ApiError) as err:
        ems.search("q")
    assert err.value.status == 500 and len(_Scripted.seen) == 3
    # appending steps is not idempotent: a 500 (maybe half done) is not retried, a 503 (nothing done) is
    _Scripted.seen, _Scripted.script = [], [500]
    with Client(url, backoff=0.01) as ems, pytest.raises(ApiError):
        ems.request("POST", "/v1/sessions/s/steps", json={}, idempotent=False)
    assert len(_Scripted.seen) == 1


def test_retries_connection_errors_then_gives_up():
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens here
    with Client(url, retries=2, backoff=0.01, timeout=1) as ems, pytest.raises(httpx.ConnectError):
        ems.stats()

    async def main() -> None:
        async with AsyncClient(url, retries=1, backoff=0.01, timeout=1) as ems:
            await ems.stats()

    with pytest.raises(httpx.ConnectError):
        asyncio.run(main())


def test_async_retries_on_503(scripted):
    _, url = scripted
    _Scripted.script = [503]

    async def main() -> list:
        async with AsyncClient(url, backoff=0.01) as ems:
            return await ems.search("q")

    assert asyncio.run(main()) == [] and len(_Scripted.seen) == 2
