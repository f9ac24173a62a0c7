"""The admission gate: at most N /v1/ requests inside the app, the rest admitted in arrival order; a waiter that
leaves passes its turn on; other paths never wait. And the server's HTTP parser and event loop settings."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from pydantic import ValidationError

from ems_service import EmbeddedServer, Settings
from ems_service.admission import Admission, FifoGate


def test_gate_admits_in_arrival_order_and_never_more_than_its_limit() -> None:
    async def scenario() -> tuple[list[int], int]:
        gate = FifoGate(2)
        entered: list[int] = []
        peak = 0
        release = asyncio.Event()

        async def request(i: int) -> None:
            nonlocal peak
            await gate.acquire()
            try:
                entered.append(i)
                peak = max(peak, gate.inside)
                if i < 2:
                    await release.wait()  # the first two hold their slots until the rest queue
                await asyncio.sleep(0)
            finally:
                gate.release()

        tasks = []
        for i in range(8):
            tasks.append(asyncio.create_task(request(i)))
            await asyncio.sleep(0)  # each arrives after the one before
        assert gate.waiting == 6
        release.set()
        await asyncio.gather(*tasks)
        assert gate.inside == 0 and gate.waiting == 0
        return entered, peak

    entered, peak = asyncio.run(scenario())
    assert entered == list(range(8))
    assert peak == 2


def test_a_waiter_that_leaves_gives_its_turn_to_the_next() -> None:
    async def scenario() -> list[str]:
        gate = FifoGate(1)
        order: list[str] = []
        await gate.acquire()  # the slot is taken
        leaver = asyncio.create_task(gate.acquire())
        async def stayer() -> None:
            await gate.acquire()
            order.append("stayer")
            gate.release()
        stay = asyncio.create_task(stayer())
        await asyncio.sleep(0)
        leaver.cancel()
        await asyncio.sleep(0)
        gate.release()
        await asyncio.wait_for(stay, 1)
        assert leaver.cancelled()
        assert gate.inside == 0 and gate.waiting == 0
        # a slot handed over just as its waiter is cancelled is passed on, not lost
        await gate.acquire()
        late = asyncio.create_task(gate.acquire())
        await asyncio.sleep(0)
        gate.release()  # hands the slot to `late`...
        late.cancel()  # ...which is cancelled before it runs
        with pytest.raises(asyncio.CancelledError):
            await late
        assert gate.inside == 0
        await asyncio.wait_for(gate.acquire(), 1)  # the slot is free again
        # a waiter cancelled and then passed over by `release` before it runs leaves cleanly
        gone = asyncio.create_task(gate.acquire())
        await asyncio.sleep(0)
        gone.cancel()
        gate.release()  # meets the cancelled turn, skips it, frees the slot
        with pytest.raises(asyncio.CancelledError):
            await gone
        assert gate.inside == 0 and gate.waiting == 0
        order.append("free")
        return order

    assert asyncio.run(scenario()) == ["stayer", "free"]


def test_gate_refuses_a_limit_below_one() -> None:
    with pytest.raises(ValueError, match="at least one"):
        FifoGate(0)


def test_middleware_gates_v1_paths_only() -> None:
    async def scenario() -> tuple[int, list[str]]:
        hold = asyncio.Event()
        inside: list[str] = []

        async def app(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
            inside.append(scope["path"])
            if scope["path"] == "/v1/slow":
                await hold.wait()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})

        gated = Admission(app, gate=FifoGate(1))
        transport = httpx.ASGITransport(app=gated)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            slow = asyncio.create_task(http.get("/v1/slow"))
            while "/v1/slow" not in inside:
                await asyncio.sleep(0.001)
            queued = asyncio.create_task(http.get("/v1/search"))
            health = await asyncio.wait_for(http.get("/healthz"), 2)  # not gated: answers while the slot is held
            await asyncio.sleep(0.05)
            assert "/v1/search" not in inside  # still waiting for the slot
            assert gated.gate.waiting == 1
            hold.set()
            await asyncio.wait_for(asyncio.gather(slow, queued), 2)
        return health.status_code, inside

    status, inside = asyncio.run(scenario())
    assert status == 200
    assert inside == ["/v1/slow", "/healthz", "/v1/search"]


def test_settings_reject_unknown_parsers_and_loops_and_negative_limits() -> None:
    for field, value in (("http", "fast"), ("loop", "trio"), ("max_in_flight", -1)):
        with pytest.raises(ValidationError, match=field):
            Settings(_env_file=None, **{field: value})


@pytest.mark.parametrize(("http", "loop", "protocol", "loop_module"), [
    ("h11", "asyncio", "H11Protocol", "asyncio"),
    ("httptools", "uvloop", "HttpToolsProtocol", "uvloop"),
])
def test_server_runs_the_parser_and_loop_it_is_told(tmp_path, embedder, http, loop, protocol, loop_module) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(_env_file=None, database_url=f"sqlite:///{tmp_path / 'ems.db'}", data_dir=tmp_path,
                        http=http, loop=loop, max_in_flight=2)
    with EmbeddedServer(settings, embedder=embedder) as server:
        response = httpx.post(server.url + "/v1/search", json={"text": "book a flight", "k": 3}, timeout=30)
        assert response.status_code == 200, response.text
        assert server._server.config.http_protocol_class.__name__ == protocol
        metrics = httpx.get(server.url + "/metrics", timeout=30).text  # not gated; the gate's gauges read idle
        assert "ems_requests_in_flight 0.0" in metrics and "ems_requests_waiting 0.0" in metrics
        made = server._server.config.get_loop_factory()()  # what uvicorn's `run` made the serving loop with
        try:
            assert type(made).__module__.split(".")[0] == loop_module
        finally:
            made.close()
