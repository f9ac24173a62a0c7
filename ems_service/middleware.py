"""ASGI middleware: request ids, the API key (namespace and role), and what a body must be before any route
reads it: JSON (415 otherwise), not compressed (415), within the size limit (413), and valid Unicode text without
NUL (422); and each request's latency by route and status for /metrics (`ObserveLatency`).

Plain ASGI, not Starlette's BaseHTTPMiddleware, whose `call_next` runs every request through an extra task and
in-memory streams."""

from __future__ import annotations

import json
import re
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ems_service.auth import OPEN_PATHS, FailureLimiter, key_from_headers
from ems_service.config import LimitSettings
from ems_service.errors import (
    BadRequest,
    EMSError,
    Forbidden,
    LimitExceeded,
    MalformedJSON,
    TooManyRequests,
    Unauthorized,
    UnsupportedMediaType,
    ValidationFailed,
    error_response,
)
from ems_service.limits import Limits
from ems_service.logs import request_id_var

_CONTENT_LENGTH = re.compile(rb"[0-9]{1,18}")
_JSON_TYPE = re.compile(r"application/(?:[a-z0-9.+-]+\+)?json", re.I)
# a candidate for a NUL or a lone surrogate in a JSON string: `\u0000`, a high surrogate escape not followed by a
# low one, or a low one not preceded by a high one (an escaped backslash before it is a false alarm that the exact
# check below clears)
_SUSPECT = re.compile(
    rb"\\u0000|\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
# what every match of _SUSPECT begins with: a pattern that starts with a literal is scanned for at C speed, while the
# lookbehind above makes _SUSPECT try every byte (`python -m benchmarks.body_checks`: a dev run 66 -> 2 µs, a batch
# of 64 runs 4.1 -> 1.0 ms)
_SURROGATE_OR_NUL = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")


def suspect(body: bytes) -> bool:
    """Whether a JSON body may hold a NUL or a lone surrogate (the exact check parses it)."""
    return _SURROGATE_OR_NUL.search(body) is not None and _SUSPECT.search(body) is not None


def _not_utf8(body: bytes) -> bool:
    """A body that Python's json would read anyway, though it is not the UTF-8 JSON the API takes: a byte-order mark
    (UTF-8, UTF-16, UTF-32), or a NUL among its first four bytes (UTF-16 or UTF-32 without one; JSON text never
    holds a raw NUL)."""
    return body.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) or b"\x00" in body[:4]


def _text_problem(value: str) -> str | None:
    if "\x00" in value:
        return "NUL characters (\\u0000) are not allowed in text"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"a lone surrogate (\\u{ord(value[exc.start]):04x}) is not valid Unicode text"
    return None


def bad_text(document: object) -> str | None:
    """`path: why` for the first string (or object key) of a parsed JSON document that is not valid Unicode text
    or holds NUL; None when every string is fine. Iterative: a deep document cannot exhaust the stack."""
    stack: list[tuple[str, object]] = [("", document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if (why := _text_problem(value)) is not None:
                return f"{path or 'body'}: {why}"
        elif isinstance(value, dict):
            for key, item in value.items():
                if (why := _text_problem(key)) is not None:
                    return f"{path or 'body'} (an object key): {why}"
                stack.append((f"{path}.{key}" if path else key, item))
        elif isinstance(value, list):
            stack.extend((f"{path}.{i}" if path else str(i), item) for i, item in enumerate(value))
    return None


class RequestContext:
    """Assigns a request id (or keeps the caller's X-Request-ID), echoes it, resolves the API key, and checks the
    body before the app sees it."""

    def __init__(self, app: ASGIApp, *, limits: LimitSettings) -> None:
        self.app = app
        self.limits = Limits(limits)
        self.failures = FailureLimiter(max_failures=limits.max_auth_failures, window_s=limits.auth_failure_window_s)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw_headers = list(scope.get("headers") or [])
        headers = dict(raw_headers)
        given = headers.get(b"x-request-id", b"").decode("latin-1")[:64]
        request_id = given if given and given.replace("-", "").isalnum() else uuid.uuid4().hex
        token = request_id_var.set(request_id)
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + [(b"x-request-id", request_id.encode())]
            await send(message)

        async def refuse(error: EMSError, headers: dict[str, str] | None = None) -> None:
            await error_response(error, request_id, headers=headers)(scope, receive, send_with_id)

        try:
            denied = self._authenticate(scope, raw_headers)
            if denied is not None:
                extra = {"www-authenticate": "Bearer"} if denied.status_code in (401, 403) else {}
                if isinstance(denied, TooManyRequests):
                    extra["retry-after"] = str(max(1, round(self.failures.window_s)))
                await refuse(denied, extra)
                return
            problem = self._check_envelope(scope, raw_headers)
            if problem is not None:
                await refuse(problem)
                return
            try:
                self.limits.body(int(headers.get(b"content-length", b"0")))  # what the client declares, then
                body, more = await self._read_body(receive)  # what arrives (a chunked body declares nothing)
            except LimitExceeded as exc:
                await refuse(exc)
                return
            if _not_utf8(body):
                await refuse(MalformedJSON("request body is UTF-16 or UTF-32, or starts with a byte-order mark: "
                                           "send UTF-8 JSON without a BOM"))
                return
            if body and scope.get("path") != "/mcp" and suspect(body):  # MCP: a tool error
                try:
                    why = bad_text(json.loads(body))
                except (ValueError, RecursionError):
                    why = None  # not JSON: the route answers 400 MalformedJSON
                if why is not None:
                    await refuse(ValidationFailed(why))
                    return
            replayed = False

            async def replay() -> Message:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive() if more else {"type": "http.disconnect"}

            await self.app(scope, replay, send_with_id)
        finally:
            request_id_var.reset(token)

    def _authenticate(self, scope: Scope, headers: list[tuple[bytes, bytes]]) -> EMSError | None:
        """Resolve the namespace and role from the API key; an error to send back, or None to go on."""
        state = scope["state"]
        state["namespace"], state["role"] = "default", "admin"
        app = scope.get("app")
        runtime = getattr(getattr(app, "state", None), "runtime", None)
        try:
            key = key_from_headers(headers)
            if runtime is None:
                return None  # still starting: the route answers 503
            if not runtime.keys.enabled():
                return None  # embedded mode: one `default` namespace and its one user, loopback only
            open_path = scope.get("path") in OPEN_PATHS
            if open_path:
                state["role"] = "anonymous"  # /healthz and /readyz need no key; a valid admin key shows more
            if key is None:
                return None if open_path else Unauthorized(
                    "missing API key: send `Authorization: Bearer <key>` or `X-API-Key: <key>`")
            client = (scope.get("client") or ("?", 0))[0]
            wait = self.failures.blocked(client)
            info = runtime.keys.resolve(key)
        except EMSError as exc:
            return exc
        if info is None:
            if wait:
                return TooManyRequests(f"too many unknown API keys from this address; retry in {wait:.0f} s "
                                       "(EMS_LIMITS__MAX_AUTH_FAILURES)")
            self.failures.failed(client)
            return None if open_path else Unauthorized("unknown API key")
        if info.revoked:
            return None if open_path else Forbidden("this API key has been revoked")
        state["namespace"], state["role"] = info.namespace, info.role
        return None

    @staticmethod
    def _check_envelope(scope: Scope, headers: list[tuple[bytes, bytes]]) -> EMSError | None:
        """What can be told from the request line and headers alone: encoding, media type, NUL in the url."""
        if "\x00" in scope.get("path", "") or b"%00" in scope.get("query_string", b""):
            return ValidationFailed("url: NUL characters (%00) are not allowed")
        values: dict[bytes, list[bytes]] = {}
        for name, value in headers:
            values.setdefault(name, []).append(value)
        lengths = values.get(b"content-length", [])
        if any(_CONTENT_LENGTH.fullmatch(v.strip()) is None for v in lengths) or len(set(lengths)) > 1:
            return BadRequest("Content-Length must be one decimal number of ASCII digits")
        encodings = [e.strip().lower() for v in values.get(b"content-encoding", []) for e in v.split(b",")]
        if any(e not in (b"", b"identity") for e in encodings):
            return UnsupportedMediaType("Content-Encoding is not supported: send the JSON body uncompressed")
        has_body = any(int(v) > 0 for v in lengths) or b"transfer-encoding" in values
        types = values.get(b"content-type", [])
        if has_body and not types:
            return UnsupportedMediaType("a body needs `Content-Type: application/json`")
        if has_body:
            media, _, params = types[-1].decode("latin-1").partition(";")
            charset = next((p.split("=", 1)[1].strip().strip('"').lower() for p in params.split(";")
                            if p.strip().lower().startswith("charset=")), "utf-8")
            if len(types) > 1 or not _JSON_TYPE.fullmatch(media.strip()) or charset not in ("utf-8", "utf8"):
                return UnsupportedMediaType(f"Content-Type {media.strip()[:60]!r} is not supported: send "
                                            "`application/json` (UTF-8)")
        return None

    async def _read_body(self, receive: Receive) -> tuple[bytes, bool]:
        """The whole body, and whether the connection may still say more; LimitExceeded past the size limit."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks), False  # the client went away: the route sees an empty body
            chunk = message.get("body", b"")
            size += len(chunk)
            self.limits.body(size)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), True


class SentStatus:
    """An ASGI `send` that remembers the status the response started with (`status`; `default` until then)."""

    def __init__(self, send: Send, default: int) -> None:
        self.send = send
        self.status = default

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        await self.send(message)


class ObserveLatency:
    """Each HTTP request's seconds into the runtime's latency histogram, by method, matched route (or
    `unmatched`) and status; a request whose route raised is counted with status 500."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        sent = SentStatus(send, 500)
        try:
            await self.app(scope, receive, sent)
        finally:
            runtime = getattr(scope["app"].state, "runtime", None) if "app" in scope else None
            if runtime is not None:
                route = scope.get("route")
                runtime.metrics.latency.labels(scope["method"], getattr(route, "path", "unmatched"),
                                               str(sent.status)).observe(time.perf_counter() - started)
