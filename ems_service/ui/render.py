"""HTML rendering: one Jinja2 environment that escapes everything, and the filters the pages share.

Every stored text is hostile (tasks, actions, summaries and lessons come from agents and the pages they saw), so
autoescape is on for every template and no template marks anything safe; links are built here from ids and
url-encoded queries, never from stored text.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined

TEMPLATES = Path(__file__).with_name("templates")


def outcome(success: bool | None) -> str:
    return {True: "success", False: "failure", None: "unlabelled"}[success]


def when(value: datetime | None) -> str:
    if value is None:
        return "never"
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)  # SQLite hands back naive UTC
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def clip(text: str | None, limit: int = 160) -> str:
    """At most `limit` characters (an observation may hold 20,000)."""
    if not text:
        return ""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def link(path: str, **query: object) -> str:
    """A dashboard link with its query url-encoded (empty values left out)."""
    params = {k: v for k, v in query.items() if v is not None and v != ""}
    return path + ("?" + urlencode(params) if params else "")


_env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
                   trim_blocks=True, lstrip_blocks=True)
_env.filters.update(outcome=outcome, when=when, clip=clip)
_env.globals.update(link=link)


def page(request: Request, template: str, *, status: int = 200, **context: object) -> HTMLResponse:
    """Render a page; `viewer` (who is logged in) and `q` (the search box) are always defined."""
    context.setdefault("viewer", None)
    context.setdefault("q", "")
    context.setdefault("active", "")
    html = _env.get_template(template).render(request_id=request.scope.get("state", {}).get("request_id", "-"),
                                              **context)
    return HTMLResponse(html, status_code=status)
