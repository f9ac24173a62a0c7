"""W3C trace context for the SDK's requests: the service's spans join the agent's trace.

Each request carries `traceparent` (and `tracestate`) from, in order: a value the caller set with
`with traceparent("00-<trace id>-<span id>-01"):`, or the caller's active OpenTelemetry span when the
opentelemetry API is installed. Neither: no header. The SDK does not depend on OpenTelemetry.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal

_given: contextvars.ContextVar[str | None] = contextvars.ContextVar("webcoach_traceparent", default=None)
_TRACEPARENT = re.compile(r"(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}")
# opentelemetry.propagate.inject once looked up; False when the API is not installed
_inject: Callable[[dict[str, str]], None] | Literal[False] | None = None


@contextmanager
def traceparent(value: str) -> Iterator[None]:
    """Send `value` as the `traceparent` of every request made inside the block (this thread or task)."""
    if not _TRACEPARENT.fullmatch(value):
        raise ValueError("traceparent must be a W3C trace context: 00-<32 hex trace id>-<16 hex span id>-<2 hex "
                         "flags>, ids not all zero")
    token = _given.set(value)
    try:
        yield
    finally:
        _given.reset(token)


def trace_headers() -> dict[str, str]:
    """The trace-context headers for one request (empty without a given value or an active span)."""
    global _inject
    given = _given.get()
    if given is not None:
        return {"traceparent": given}
    if _inject is None:
        try:
            from opentelemetry.propagate import inject
        except ImportError:
            _inject = False
        else:
            _inject = inject
    if not _inject:
        return {}
    carrier: dict[str, str] = {}
    _inject(carrier)  # the configured propagators (W3C trace context by default); nothing without a span
    return carrier
