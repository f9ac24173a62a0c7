"""Which namespace a request may touch: resolved from its API key (or `default` in embedded mode)."""

from __future__ import annotations

from fastapi import Request

from ems_service.errors import EMSError

DEFAULT_NAMESPACE = "default"
OPEN_PATHS = frozenset({"/healthz", "/readyz"})


class Unauthorized(EMSError):
    status_code = 401


class Forbidden(EMSError):
    status_code = 403


def key_from_headers(headers: dict[bytes, bytes]) -> str | None:
    auth = headers.get(b"authorization", b"").decode("latin-1").strip()
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    key = headers.get(b"x-api-key", b"").decode("latin-1").strip()
    return key or None


async def namespace_of(request: Request) -> str:
    """The caller's namespace, set by the auth middleware from its key (async: no thread handoff)."""
    return request.scope.get("state", {}).get("namespace", DEFAULT_NAMESPACE)


async def require_admin(request: Request) -> None:
    if not request.scope.get("state", {}).get("admin"):
        raise Forbidden("this route needs an admin key")
