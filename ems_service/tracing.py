"""OpenTelemetry traces, opt-in (EMS_TRACING__ENABLED=true): the one module that imports OpenTelemetry.

Spans: `{METHOD} {route}` per HTTP request (a child of the caller's W3C `traceparent` when one is sent), `ingest`,
`condense`, `embed`, `index`, `store` (one per SQL statement inside a traced operation) and `coach`. Their
attributes are counts, flags, the namespace and names of our own (route, SQL verb, error class): never a task, a
url, a key, a vector or an error message, and `_attributes` drops any other text, so content cannot reach an
exporter by mistake.

Where spans go is the standard OTEL_* variables' business (OTEL_TRACES_EXPORTER otlp|console|none,
OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, ...); a TracerProvider the host process set up
already (an agent that embeds the service) is used as it is. Off, nothing is imported, wrapped or exported: the
runtime's objects are the untouched originals and the request path gains no layer.

Why instances are wrapped after construction: the Runtime builds the embedder, vector backend and database itself
and the ingest service calls `condense` directly, so `instrument` wraps what the runtime built (and the ingest
module's `condense`), only when tracing is on; the services hold those objects, so they call the wrappers. Every wrapper checks `_tracer` at call time, so an instance shared
with an untraced app (the tests' embedder) costs one attribute read.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from starlette.types import ASGIApp, Receive, Scope, Send

from ems_service.config import TracingSettings
from ems_service.middleware import SentStatus

if TYPE_CHECKING:
    from ems_service.runtime import Runtime

logger = logging.getLogger(__name__)

_tracer: Any = None  # an opentelemetry Tracer while tracing is on; None: every span is the shared no-op
# the only attributes that may carry text: names of ours, never caller content
_TEXT_KEYS = frozenset({"ems.namespace", "ems.op", "ems.tool", "http.route", "http.request.method", "db.system",
                        "db.operation", "error.type"})


class _NoSpan:
    """What `span` gives when tracing is off: its own context manager, so the off path builds no generator."""

    def __enter__(self) -> _NoSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def set(self, **attributes: object) -> None:
        pass


class _Span:
    def __init__(self, span: Any) -> None:
        self._span = span

    def set(self, **attributes: object) -> None:
        self._span.set_attributes(_attributes(attributes))


_NO_SPAN = _NoSpan()


def _attributes(given: dict[str, object]) -> dict[str, object]:
    """`ems.`-prefixed numbers and flags, and text only under the keys of `_TEXT_KEYS`."""
    out: dict[str, object] = {}
    for key, value in given.items():
        name = key if "." in key else f"ems.{key}"
        if value is None:
            continue
        if isinstance(value, bool | int | float) or (isinstance(value, str) and name in _TEXT_KEYS):
            out[name] = value
    return out


def enabled() -> bool:
    return _tracer is not None


def configure(settings: TracingSettings) -> bool:
    """Turn tracing on for this process when the settings ask for it (once; later calls keep the first set-up).
    Returns whether tracing is on."""
    global _tracer
    if not settings.enabled or _tracer is not None:
        return _tracer is not None
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # nobody set one up: ours, from the OTEL_* variables
        provider = _provider_from_environment()
        trace.set_tracer_provider(provider)
    _tracer = provider.get_tracer("ems_service")
    logger.info("tracing on (exporter %s)", os.environ.get("OTEL_TRACES_EXPORTER", "otlp"))
    return True


def _provider_from_environment() -> Any:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override this default (Resource.create reads them)
    provider = TracerProvider(resource=Resource.create({"service.name": "webcoach-ems"}))
    for name in os.environ.get("OTEL_TRACES_EXPORTER", "otlp").split(","):
        name = name.strip().lower()
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        elif name == "console":
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        elif name not in ("none", ""):
            raise ValueError(f"OTEL_TRACES_EXPORTER={name!r} is not supported here: use otlp, console or none")
    return provider


def shutdown() -> None:
    """Turn tracing off again for this process (the tests switch between traced and untraced apps)."""
    global _tracer
    _tracer = None


def span(name: str, **attributes: object) -> AbstractContextManager[_Span | _NoSpan]:
    """A child span of the current one; `.set(**attributes)` adds results. A failure sets `error.type` to the
    exception's class (its message may quote input, so it is not recorded)."""
    tracer = _tracer
    return _NO_SPAN if tracer is None else _live_span(tracer, name, attributes)


@contextmanager
def _live_span(tracer: Any, name: str, attributes: dict[str, object]) -> Iterator[_Span]:
    with tracer.start_as_current_span(name, attributes=_attributes(attributes), record_exception=False,
                                      set_status_on_exception=False) as current:
        try:
            yield _Span(current)
        except BaseException as exc:
            _failed(current, exc)
            raise


def _failed(current: Any, exc: BaseException) -> None:
    from opentelemetry.trace import StatusCode

    current.set_attribute("error.type", type(exc).__name__)
    current.set_status(StatusCode.ERROR)


# -- HTTP requests --------------------------------------------------------------------------------------------


class TraceRequests:
    """ASGI middleware: one server span per HTTP request, the child of the caller's `traceparent` (W3C) when it
    sent one. Named by the route template (`POST /v1/sessions/{session_id}/steps`), never the path itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tracer = _tracer
        if scope["type"] != "http" or tracer is None:
            await self.app(scope, receive, send)
            return
        from opentelemetry import propagate
        from opentelemetry.trace import SpanKind, StatusCode

        carrier = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope.get("headers") or ()
                   if name in (b"traceparent", b"tracestate")}
        sent = SentStatus(send, 0)
        method = scope.get("method", "")
        with tracer.start_as_current_span(method, context=propagate.extract(carrier), kind=SpanKind.SERVER,
                                          record_exception=False, set_status_on_exception=False) as current:
            try:
                await self.app(scope, receive, sent)
            except BaseException as exc:
                _failed(current, exc)
                raise
            finally:
                route = getattr(scope.get("route"), "path", None) or ("/mcp" if scope.get("path") == "/mcp" else None)
                current.update_name(f"{method} {route or 'unmatched'}")
                state = scope.get("state") or {}
                current.set_attributes(_attributes({
                    "http.request.method": method, "http.route": route, "http.response.status_code": sent.status,
                    "namespace": state.get("namespace"),
                }))
                if sent.status >= 500:
                    current.set_status(StatusCode.ERROR)


def install(app: Any, settings: TracingSettings) -> None:
    """Trace `app`'s requests when the settings turn tracing on (outermost, so refusals are traced too)."""
    if configure(settings):
        app.add_middleware(TraceRequests)


# -- the runtime's collaborators ------------------------------------------------------------------------------


def _traced(name: str, describe: Callable[..., dict[str, object]],
            result: Callable[[Any], dict[str, object]] | None = None) -> Callable[[Callable], Callable]:
    def wrap(fn: Callable) -> Callable:
        if getattr(fn, "_ems_traced", False):
            return fn

        @functools.wraps(fn)
        def traced(*args: Any, **kwargs: Any) -> Any:
            if _tracer is None:
                return fn(*args, **kwargs)
            with span(name, **describe(*args, **kwargs)) as current:
                out = fn(*args, **kwargs)
                if result is not None:
                    current.set(**result(out))
                return out

        traced._ems_traced = True  # type: ignore[attr-defined]  # a marker on the function: wrapped once only
        return traced

    return wrap


def _namespace(*args: Any, **kwargs: Any) -> dict[str, object]:
    return {"namespace": kwargs.get("namespace", args[0] if args and isinstance(args[0], str) else None)}


def _index(op: str) -> Callable[..., dict[str, object]]:
    def describe(namespace: str, what: Any = None, *args: Any, **kwargs: Any) -> dict[str, object]:
        count = len(what) if isinstance(what, list | set | tuple) else None
        return {"namespace": namespace, "op": op, "k": getattr(what, "k", None), "count": count}

    return describe


def _coach_result(out: Any) -> dict[str, object]:
    guidance = out[0]
    return {"intervene": guidance.intervene, "risk": round(float(guidance.failure_risk), 4)}


def instrument(runtime: Runtime) -> None:
    """Wrap the runtime's embedder, vector backend, database engine, ingest and coaching in spans (tracing on
    only)."""
    if _tracer is None:
        return
    from ems_service import ingest

    service, vectors, embedder = runtime.ingest, runtime.vectors, runtime.embedder
    embedder.embed = _traced("embed", lambda texts, *a, **k: {"count": len(texts)})(embedder.embed)
    vectors.search = _traced("index", _index("search"), lambda hits: {"count": len(hits)})(vectors.search)
    vectors.add = _traced("index", _index("add"))(vectors.add)
    vectors.remove = _traced("index", _index("remove"))(vectors.remove)
    service.ingest = _traced("ingest", lambda namespace, trajectories, **k: {
        "namespace": namespace, "count": len(trajectories)})(service.ingest)
    runtime.coaching.guide = _traced("coach", lambda namespace, run, k=None, **kw: {
        "namespace": namespace, "k": k or runtime.settings.coach.k, "steps": len(run.steps)},
        _coach_result)(runtime.coaching.guide)
    ingest.condense = _traced("condense", lambda trajectory, namespace=None, **k: {
        "namespace": namespace, "steps": len(trajectory.steps)})(ingest.condense)
    _trace_statements(runtime.db.engine)


def _trace_statements(engine: Any) -> None:
    from sqlalchemy import event

    if not event.contains(engine, "before_cursor_execute", _statement_started):
        event.listen(engine, "before_cursor_execute", _statement_started)
        event.listen(engine, "after_cursor_execute", _statement_ended)
        event.listen(engine, "handle_error", _statement_failed)


def _statement_started(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
    if _tracer is None or context is None:
        return
    from opentelemetry.trace import get_current_span

    if not get_current_span().get_span_context().is_valid:
        return  # background work (following, snapshots): a root span per statement every second is noise
    verb = statement.lstrip().split(None, 1)[0].upper() if statement.strip() else "?"
    context._ems_span = _tracer.start_span("store", attributes=_attributes({
        "db.system": conn.engine.dialect.name, "db.operation": verb, "executemany": many}))


def _statement_ended(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
    current = getattr(context, "_ems_span", None)
    if current is not None:
        context._ems_span = None
        current.end()


def _statement_failed(exception_context: Any) -> None:
    context = exception_context.execution_context
    current = getattr(context, "_ems_span", None)
    if current is not None:
        context._ems_span = None
        _failed(current, exception_context.original_exception)
        current.end()
