"""create_app(settings): the FastAPI application, its error handlers and lifespan."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ems_service import tracing
from ems_service.admission import Admission, FifoGate
from ems_service.config import Settings
from ems_service.embeddings import Embedder
from ems_service.errors import (
    BadRequest,
    EMSError,
    HTTPError,
    InternalError,
    MalformedJSON,
    MethodNotAllowed,
    NotFound,
    ValidationFailed,
    error_response,
)
from ems_service.middleware import ObserveLatency, RequestContext
from ems_service.runtime import Runtime
from ems_service.schemas import ErrorBody
from ems_service.ui import mount_ui

logger = logging.getLogger(__name__)


def _request_id(request: Request) -> str:
    return request.scope.get("state", {}).get("request_id", "-")


def _describe(exc: RequestValidationError) -> EMSError:
    """FastAPI's validation errors in the tree: a body that is not JSON, or which fields are invalid and why."""
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        msg = next(e for e in errors if e.get("type") == "json_invalid").get("ctx", {}).get("error", "")
        return MalformedJSON(f"request body is not valid JSON: {msg}".rstrip(": "))
    parts = []
    for err in errors[:8]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{loc}: {err.get('msg')}")
    if len(errors) > 8:
        parts.append(f"and {len(errors) - 8} more")
    return ValidationFailed("; ".join(parts))


def _translate(exc: StarletteHTTPException) -> EMSError:
    """A FastAPI / Starlette HTTPException in the tree. FastAPI raises its 400 *from* the parser's exception
    when a body cannot be read (not UTF-8, nested past the recursion limit): that chained cause, not the
    message text, tells a body it could not parse from any other 400."""
    if exc.status_code == 400 and exc.__cause__ is not None:
        return MalformedJSON("request body could not be parsed: send UTF-8 JSON")
    known = {400: BadRequest, 404: NotFound, 405: MethodNotAllowed}.get(exc.status_code)
    if known is not None:
        return known(str(exc.detail))
    return HTTPError(str(exc.detail), status_code=exc.status_code)


def install_error_handlers(app: FastAPI) -> None:
    """Every error leaves as `{error, detail, request_id}`: each handler translates into the tree, and
    errors.error_response writes the body."""

    @app.exception_handler(EMSError)
    async def _ems(request: Request, exc: EMSError) -> JSONResponse:
        return error_response(exc, _request_id(request))

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(_describe(exc), _request_id(request))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(_translate(exc), _request_id(request))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.error("unhandled %s on %s %s", type(exc).__name__, request.method, request.url.path, exc_info=exc)
        return error_response(InternalError("unexpected error; see the server log for this request id"),
                              _request_id(request))


_ERRORS = {
    400: "malformed request (not JSON, not UTF-8, a bad cursor, more than one credential)",
    401: "missing or unknown API key",
    403: "the key's role may not do this (admin and verifier routes, a verified label)",
    404: "no such resource in this namespace",
    409: "conflict with the stored state", 413: "a named limit was exceeded (EMS_LIMITS__*)",
    415: "the body is not JSON (Content-Type) or is compressed (Content-Encoding)",
    422: "the request is well-formed JSON but invalid (which field, and why)",
    429: "too many unknown API keys from this address (EMS_LIMITS__MAX_AUTH_FAILURES)",
    503: "not ready, or the database is unavailable (retry later)",
}


def create_app(settings: Settings, *, embedder: Embedder | None = None) -> FastAPI:
    """The service as an ASGI app; the runtime is built at start-up (lifespan)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = Runtime(settings, embedder=embedder).start()
        tracing.instrument(runtime)  # spans around the runtime's parts, when tracing is on
        app.state.runtime = dashboard.state.runtime = runtime  # the API's and the dashboard's dependencies
        if gate is not None:
            runtime.metrics.watch_admission(gate)
        try:
            async with mcp.running():
                yield
        finally:
            runtime.close()

    from ems_service import mcp_server
    from ems_service.routes import admin, coaching, episodes, memory, search, system

    app = FastAPI(
        title="WebCoach EMS",
        version="0.1.0",
        description="Episodic memory and coaching for fleets of web agents.",
        lifespan=lifespan,
        # spans are ems_service.tracing's (no content); FastAPI's own would export url paths and error messages
        telemetry={"tracing": False, "metrics": False, "logs": False, "operation_spans": False},
        # every route may answer with the one error shape: documented once, here
        responses={status: {"model": ErrorBody, "description": text} for status, text in _ERRORS.items()},
    )
    install_error_handlers(app)

    gate = FifoGate(settings.max_in_flight) if settings.max_in_flight else None
    if gate is not None:
        app.add_middleware(Admission, gate=gate)  # inside ObserveLatency: the wait is part of a request's latency
    app.add_middleware(ObserveLatency)
    app.include_router(system.router)
    app.include_router(episodes.router)
    app.include_router(search.router)
    app.include_router(coaching.router)
    app.include_router(memory.router)
    app.include_router(admin.router)
    app.add_middleware(RequestContext, limits=settings.limits)
    mcp = mcp_server.mount(app, settings)  # /mcp: the tools over streamable HTTP, behind the same keys
    dashboard = mount_ui(app, settings)  # /ui: the dashboard, in front of the API's key and JSON checks
    tracing.install(app, settings.tracing)  # outermost: every request's span, refusals included
    app.state.settings = settings
    return app

