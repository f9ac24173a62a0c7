"""Which namespace a request may touch."""

from __future__ import annotations

from fastapi import Request

DEFAULT_NAMESPACE = "default"


def namespace_of(request: Request) -> str:
    """The caller's namespace (embedded mode without keys serves one `default` namespace)."""
    return DEFAULT_NAMESPACE
