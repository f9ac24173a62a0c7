"""Admission: at most `EMS_MAX_IN_FLIGHT` API requests inside the service at once; the rest wait their turn in
the order they came.

Why: on a machine with few cores every request in flight shares them (and the GIL) with every other, so under a
fleet's load each one takes as long as the crowd around it and the slowest wait far longer than the median (the
32-client mixed load: p99 1.7x its p50). Let in a few at a time, in arrival order, a request's wait is the sum of
the service times ahead of it, which varies much less from one request to the next than a share of a crowd. A
few in flight still fill the embedder's merged batches (`ems_service.batcher`) and overlap one request's database
or socket wait with another's CPU.

Measured (README, "Performance", the eighth session): alone the gate cut the tail only by what it cost in
throughput (fewer requests in flight make smaller merged batches); beside two embedder lanes (EMS_EMBEDDER__LANES),
which give the throughput back, 16 in flight kept the mixed load's p99 below the ungated one-lane service's. So 16
by default.

Only /v1/ routes wait: health, metrics, the dashboard and MCP's streams (which stay open) are never queued. A
request waits after its key and body were checked, so a refusal never queues, and a client that leaves while
waiting gives its turn to the next.
"""

from __future__ import annotations

import asyncio
from collections import deque

from starlette.types import ASGIApp, Receive, Scope, Send

GATED_PREFIX = "/v1/"


class FifoGate:
    """An async semaphore that admits its waiters strictly in arrival order (a released slot is handed to the
    oldest waiter, so a newcomer cannot overtake one that is already waiting)."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("a gate admits at least one request at a time")
        self.limit = limit
        self.inside = 0
        self._waiting: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        return len(self._waiting)  # (a waiter cancelled this instant may still count)

    async def acquire(self) -> None:
        if self.inside < self.limit and not self._waiting:
            self.inside += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        try:
            await turn  # `release` hands its slot over: `inside` is unchanged
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release()  # the slot came as the waiter left: pass it on
            elif turn in self._waiting:  # (`release` drops a cancelled turn it meets)
                self._waiting.remove(turn)
            raise

    def release(self) -> None:
        while self._waiting:
            turn = self._waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self.inside -= 1


class Admission:
    """ASGI middleware: /v1/ requests pass through `gate` (its state is on /metrics: `Metrics.watch_admission`)."""

    def __init__(self, app: ASGIApp, *, gate: FifoGate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope.get("path", "").startswith(GATED_PREFIX):
            await self.app(scope, receive, send)
            return
        await self.gate.acquire()
        try:
            await self.app(scope, receive, send)
        finally:
            self.gate.release()
