"""Who is looking: the dashboard's API-key login, kept in an HttpOnly, SameSite=Strict cookie.

The cookie holds the key itself (base64, so any key survives cookie syntax) and every request resolves it through
the same KeyRing as the REST API: a revoked key is logged out on its next click, and the key's namespace and role
apply exactly as on /v1. With no key in the database (embedded mode) the REST API serves `default` as admin to
anyone on loopback, and so does the dashboard. Unknown keys typed into the form are limited per address with the
API's settings (EMS_LIMITS__MAX_AUTH_FAILURES per EMS_LIMITS__AUTH_FAILURE_WINDOW_S).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import parse_qs, urlsplit

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response

from ems_service.auth import FailureLimiter
from ems_service.errors import BadRequest, Forbidden, LimitExceeded
from ems_service.routes.deps import Keys
from ems_service.ui.render import page

COOKIE = "ems_ui_key"
MAX_FORM_BYTES = 4096
# why the login page is shown, by code: the page never echoes text from the url
REASONS = {"unknown": "That key is no longer known: log in again.", "revoked": "That key has been revoked.",
           "logged-out": "You are logged out."}


@dataclass(frozen=True)
class Viewer:
    namespace: str
    role: str
    key_prefix: str | None  # which key is in use (its first 10 characters, as /v1/admin/keys shows); None: embedded


class LoginRequired(Exception):
    """No usable key: the handler sends the browser to the login page (with why, when there is a why)."""

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason


def _key_from_cookie(request: Request) -> str | None:
    raw = request.cookies.get(COOKIE)
    if not raw:
        return None
    try:
        return base64.urlsafe_b64decode(raw.encode("ascii")).decode("utf-8")
    except (ValueError, UnicodeError, binascii.Error):
        return None


async def viewer(request: Request, keys: Keys) -> Viewer:
    """The logged-in key's namespace and role (async: an in-memory lookup, no thread handoff)."""
    if not keys.enabled():
        return Viewer("default", "admin", None)
    key = _key_from_cookie(request)
    if key is None:
        raise LoginRequired()
    info = keys.resolve(key)
    if info is None:
        raise LoginRequired("unknown")
    if info.revoked:
        raise LoginRequired("revoked")
    return Viewer(info.namespace, info.role, key[:10])


Who = Annotated[Viewer, Depends(viewer)]


def same_origin(request: Request) -> None:
    """A form post must come from the dashboard's own pages (login CSRF; the cookie's SameSite covers the rest)."""
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
        raise Forbidden("the form was posted from another site")


router = APIRouter(prefix="/ui")


def _login_page(request: Request, status: int = 200, *, notice: str = "", error: str = "") -> Response:
    return page(request, "login.html", status=status, notice=notice, error=error)


@router.get("/login")
async def login_form(request: Request, keys: Keys) -> Response:
    """The login page (embedded mode has no keys: straight to the overview)."""
    if not keys.enabled():
        return RedirectResponse("/ui/", status_code=303)
    return _login_page(request, notice=REASONS.get(request.query_params.get("reason", ""), ""))


@router.post("/login")
async def login(request: Request, keys: Keys) -> Response:
    """Check the key like the API would, then keep it in the session cookie."""
    same_origin(request)
    if (request.headers.get("content-type") or "").split(";")[0].strip() != "application/x-www-form-urlencoded":
        raise BadRequest("send the login form")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise LimitExceeded(f"the login form is limited to {MAX_FORM_BYTES} bytes")
    try:
        form = parse_qs(body.decode("utf-8"), max_num_fields=4, strict_parsing=False)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadRequest("the login form could not be read") from exc
    key = (form.get("key") or [""])[0].strip()
    limiter: FailureLimiter = request.app.state.login_failures
    client = request.client.host if request.client else "?"
    if wait := limiter.blocked(client):
        return _login_page(request, 429, error=f"Too many unknown keys from this address; try again in {wait:.0f} s.")
    info = keys.resolve(key) if key and "\x00" not in key else None
    if info is None:
        limiter.failed(client)
        return _login_page(request, 401, error="Unknown API key.")
    if info.revoked:
        return _login_page(request, 403, error="This API key has been revoked.")
    response = RedirectResponse("/ui/", status_code=303)
    response.set_cookie(COOKIE, base64.urlsafe_b64encode(key.encode("utf-8")).decode("ascii"), path="/ui",
                        httponly=True, samesite="strict", secure=request.url.scheme == "https")
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    """Forget the key (the cookie); the key itself stays valid for the API."""
    same_origin(request)
    response = RedirectResponse("/ui/login?reason=logged-out", status_code=303)
    response.delete_cookie(COOKIE, path="/ui", httponly=True, samesite="strict")
    return response


def login_redirect(exc: LoginRequired) -> Response:
    """Where LoginRequired sends the browser; a stale cookie is dropped on the way."""
    response = RedirectResponse(f"/ui/login?reason={exc.reason}" if exc.reason else "/ui/login", status_code=303)
    if exc.reason:
        response.delete_cookie(COOKIE, path="/ui", httponly=True, samesite="strict")
    return response

