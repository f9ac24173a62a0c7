"""Who a request is: its namespace and role, resolved from its API key (`default` and admin in embedded mode).

Roles: `writer` posts runs, lessons and facts; `verifier` may also vouch for outcomes (verified, judge, human or
benchmark labels; verified facts) and promote hand-added lessons to tier 1; `admin` may also manage keys and read
metrics and readiness details. A writer's claim of a verified label is stored as an unverified self-report.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from fastapi import Request

from condenser import Outcome, is_verified
from ems_service.errors import AmbiguousCredentials, Forbidden

DEFAULT_NAMESPACE = "default"
OPEN_PATHS = frozenset({"/healthz", "/readyz"})
ROLES = ("admin", "writer", "verifier")
VOUCHING_ROLES = frozenset({"admin", "verifier"})
DOWNGRADE_NOTE = ("a writer key cannot vouch for an outcome: stored as an unverified self-report "
                  "(label_source=self_report, verified=false); a verifier or admin key may relabel it")


def key_from_headers(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The one API key of a request (`Authorization: Bearer` or `X-API-Key`); more than one is refused."""
    given = [(name, value) for name, value in headers if name in (b"authorization", b"x-api-key")]
    if len(given) > 1:
        raise AmbiguousCredentials("send exactly one credential: one `Authorization: Bearer <key>` or one "
                                   "`X-API-Key: <key>` header, not several")
    if not given:
        return None
    name, raw = given[0]
    value = raw.decode("latin-1").strip()
    if name == b"authorization":
        if not value.lower().startswith("bearer "):
            return None
        value = value[7:].strip()
    return value or None


def may_vouch(role: str) -> bool:
    """True for the roles whose word on an outcome counts as verified."""
    return role in VOUCHING_ROLES


def gate_outcome(outcome: Outcome, *, role: str) -> tuple[Outcome, bool]:
    """The outcome as it may be stored for `role`, and whether a verified claim was downgraded."""
    if may_vouch(role) or not is_verified(outcome.label_source, outcome.verified):
        return outcome, False
    return outcome.model_copy(update={"label_source": "self_report", "verified": False}), True


class FailureLimiter:
    """Counts unknown keys per client address; past `max_failures` in `window_s` the address is told 429 without
    a lookup. Valid keys still pass (a key is 256 random bits: the limit is about load, not guessing)."""

    def __init__(self, *, max_failures: int, window_s: float, max_clients: int = 10_000) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self.max_clients = max_clients
        self._failures: OrderedDict[str, tuple[float, int]] = OrderedDict()
        self._lock = threading.Lock()

    def blocked(self, client: str) -> float:
        """Seconds until `client` may try an unknown key again (0: it may)."""
        with self._lock:
            started, n = self._failures.get(client, (0.0, 0))
            left = started + self.window_s - time.monotonic()
            return left if n >= self.max_failures and left > 0 else 0.0

    def failed(self, client: str) -> None:
        now = time.monotonic()
        with self._lock:
            started, n = self._failures.pop(client, (now, 0))
            if now - started > self.window_s:
                started, n = now, 0
            self._failures[client] = (started, n + 1)
            while len(self._failures) > self.max_clients:
                self._failures.popitem(last=False)


def _state(request: Request) -> dict:
    return request.scope.get("state", {})


async def namespace_of(request: Request) -> str:
    """The caller's namespace, set by the auth middleware from its key (async: no thread handoff)."""
    return _state(request).get("namespace", DEFAULT_NAMESPACE)


async def role_of(request: Request) -> str:
    """The caller's role (`admin` in embedded mode: one local user)."""
    return _state(request).get("role", "admin")


async def require_admin(request: Request) -> None:
    if _state(request).get("role", "admin") != "admin":
        raise Forbidden("this route needs an admin key")


async def require_verifier(request: Request) -> None:
    if not may_vouch(_state(request).get("role", "admin")):
        raise Forbidden("this route needs a verifier or admin key")
