"""The dashboard as its own small ASGI app, and the gate in front of the service that hands it /ui.

Why a gate and not a router of the main app: the API's middleware reads the key from headers and accepts only
JSON bodies, while a browser sends a cookie and a login form. The gate gives every /ui request its request id and
the dashboard's security headers, and the dashboard resolves the cookie through the same KeyRing the API uses.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ems_service.auth import FailureLimiter
from ems_service.config import LimitSettings
from ems_service.errors import EMSError
from ems_service.logs import request_id_var
from ems_service.ui import episodes, knowledge, login, sessions
from ems_service.ui.render import page

logger = logging.getLogger(__name__)
PREFIX = "/ui"
# No script at all (nothing needs one), styles and images from the dashboard itself, forms only to itself, never
# framed: a stored payload that slipped past escaping would still have nothing to run and nowhere to send data.
# Referrer-Policy same-origin, not no-referrer: under no-referrer Chromium posts forms with `Origin: null`, which the
# login's same-origin check has to refuse; same-origin still sends no url (with its query) to another site.
CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
       "base-uri 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"x-frame-options", b"DENY"), (b"referrer-policy", b"same-origin"),
           (b"cross-origin-opener-policy", b"same-origin")]
TITLES = {400: "Bad request", 401: "Not logged in", 403: "Forbidden", 404: "Not found", 405: "Method not allowed",
          409: "Conflict", 413: "Too large", 422: "Invalid input", 429: "Too many requests", 500: "Server error",
          503: "Not ready"}


def _error(request: Request, status: int, detail: str) -> Response:
    return page(request, "error.html", status=status, title=TITLES.get(status, "Error"), detail=detail)


def build_dashboard(*, limits: LimitSettings) -> FastAPI:
    """The /ui app: login, pages, static files, and HTML error pages in the API's error vocabulary. Its pages
    take the REST routes' services (ems_service.routes.deps), from the runtime the composition root puts in
    `state.runtime`."""
    ui = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    ui.state.login_failures = FailureLimiter(max_failures=limits.max_auth_failures,
                                             window_s=limits.auth_failure_window_s)
    for module in (login, episodes, knowledge, sessions):
        ui.include_router(module.router)
    ui.mount(f"{PREFIX}/static", StaticFiles(directory=Path(__file__).with_name("static")), name="static")

    @ui.exception_handler(login.LoginRequired)
    async def _login(request: Request, exc: login.LoginRequired) -> Response:
        return login.login_redirect(exc)

    @ui.exception_handler(EMSError)
    async def _ems(request: Request, exc: EMSError) -> Response:
        return _error(request, exc.status_code, exc.detail)

    @ui.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        parts = [f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors()[:4]]
        return _error(request, 422, "; ".join(parts))

    @ui.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        return _error(request, exc.status_code, str(exc.detail))

    @ui.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        logger.error("unhandled %s on %s %s", type(exc).__name__, request.method, request.url.path, exc_info=exc)
        return _error(request, 500, "unexpected error; see the server log for this request id")

    return ui


class DashboardGate:
    """ASGI middleware: /ui and /ui/... go to the dashboard, everything else to the API unchanged."""

    def __init__(self, app: ASGIApp, *, dashboard: ASGIApp) -> None:
        self.app = app
        self.dashboard = dashboard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == PREFIX or path.startswith(PREFIX + "/")):
            await self.app(scope, receive, send)
            return
        request_id = uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        token = request_id_var.set(request_id)
        cache = [] if path.startswith(f"{PREFIX}/static/") else [(b"cache-control", b"no-store")]

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS, *cache,
                                      (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.dashboard(scope, receive, send_secured)
        finally:
            request_id_var.reset(token)
