"""ASGI middleware: request ids and the body-size limit."""

from __future__ import annotations

import json
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ems_service.auth import OPEN_PATHS, key_from_headers
from ems_service.errors import EMSError
from ems_service.logs import request_id_var


def error_bytes(error: str, detail: str, request_id: str) -> bytes:
    return json.dumps({"error": error, "detail": detail, "request_id": request_id}).encode()


class RequestContext:
    """Assigns a request id (or keeps the caller's X-Request-ID), echoes it, and caps the body size."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        given = headers.get(b"x-request-id", b"").decode("latin-1")[:64]
        request_id = given if given and given.replace("-", "").isalnum() else uuid.uuid4().hex
        token = request_id_var.set(request_id)
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + [(b"x-request-id", request_id.encode())]
            await send(message)

        try:
            denied = self._authenticate(scope, headers)
            if denied is not None:
                body = error_bytes(denied.name, denied.detail, request_id)
                await send_with_id({"type": "http.response.start", "status": denied.status_code,
                                    "headers": [(b"content-type", b"application/json"),
                                                (b"content-length", str(len(body)).encode()),
                                                (b"www-authenticate", b"Bearer")]})
                await send_with_id({"type": "http.response.body", "body": body})
                return
            length = headers.get(b"content-length")
            if length is not None and (not length.isdigit() or int(length) > self.max_body_bytes):
                await self._reject(send_with_id, request_id)
                return
            received = 0

            async def limited_receive() -> Message:
                nonlocal received
                message = await receive()
                if message["type"] == "http.request":
                    received += len(message.get("body", b""))
                    if received > self.max_body_bytes:
                        scope["state"]["body_too_large"] = True
                        raise _BodyTooLarge
                return message

            try:
                await self.app(scope, limited_receive, send_with_id)
            except _BodyTooLarge:
                await self._reject(send_with_id, request_id)
        finally:
            request_id_var.reset(token)

    @staticmethod
    def _authenticate(scope: Scope, headers: dict[bytes, bytes]) -> EMSError | None:
        """Resolve the namespace from the API key; an error to send back, or None to go on."""
        from ems_service.auth import Forbidden, Unauthorized

        state = scope["state"]
        state["namespace"], state["admin"] = "default", True
        if scope.get("path") in OPEN_PATHS:
            return None
        app = scope.get("app")
        runtime = getattr(getattr(app, "state", None), "runtime", None)
        if runtime is None:
            return None  # still starting: the route answers 503
        try:
            if not runtime.keys.enabled():
                return None  # embedded mode: one `default` namespace, loopback only
            key = key_from_headers(headers)
            if key is None:
                return Unauthorized("missing API key: send `Authorization: Bearer <key>` or `X-API-Key: <key>`")
            info = runtime.keys.resolve(key)
        except EMSError as exc:
            return exc
        if info is None:
            return Unauthorized("unknown API key")
        if info.revoked:
            return Forbidden("this API key has been revoked")
        state["namespace"], state["admin"] = info.namespace, info.admin
        return None

    async def _reject(self, send: Send, request_id: str) -> None:
        body = error_bytes(
            "LimitExceeded", f"request body exceeds {self.max_body_bytes} bytes (EMS_LIMITS__MAX_BODY_BYTES)", request_id
        )
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


class _BodyTooLarge(Exception):
    pass
