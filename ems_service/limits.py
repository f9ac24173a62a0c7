"""Input limits: every limit a caller can hit, and every message that names it (`EMS_LIMITS__<NAME>`), live here.

Checked once, at the edge: `within_limits` wraps a route and checks its body and its path and query values before
it runs (the MCP tools call the same route functions, so they are held to the same limits), the middleware checks
the body's size, and the services trust what they are handed. Two checks need the stored state as well and are
asked for by the services that hold it: a session's run as it grows (`session_steps`, `session_bytes`) and a facts
entry as it is merged (`merged_items`).

One walker over the validated request models, so a new field is covered the day it is added (an unknown text
field falls under EMS_LIMITS__MAX_FIELD_CHARS, an unknown list under EMS_LIMITS__MAX_ITEMS), and the same checks
run on SQLite and PostgreSQL before anything reaches the database.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, ParamSpec, TypeVar, get_args, get_origin

from fastapi import params
from pydantic import BaseModel

from ems_service.config import LimitSettings
from ems_service.errors import LimitExceeded

# field name -> the setting bounding its text (a list's items are checked under the list's name)
TEXT_LIMITS = {
    "task": "max_task_chars",
    "url": "max_url_chars", "start_url": "max_url_chars",
    "agent": "max_name_chars", "model": "max_name_chars", "task_id": "max_name_chars",
    "exclude_task_id": "max_name_chars", "domain": "max_name_chars", "intent": "max_name_chars",
    "namespace": "max_name_chars", "session_id": "max_name_chars", "type": "max_name_chars",
    "status": "max_label_chars", "failed_command": "max_label_chars",
    "lesson": "max_lesson_chars",
    "selectors": "max_item_chars", "interaction_hints": "max_item_chars", "known_blockers": "max_item_chars",
    "anti_patterns": "max_item_chars",
}
DEFAULT_TEXT = "max_field_chars"
# list name -> the setting bounding its length
COUNT_LIMITS = {"steps": "max_steps", "episodes": "max_batch"}
DEFAULT_COUNT = "max_items"
# integer name -> the setting bounding it
NUMBER_LIMITS = {"k": "max_k", "limit": "max_page"}

P = ParamSpec("P")
R = TypeVar("R")


def env_name(setting: str) -> str:
    return f"EMS_LIMITS__{setting.upper()}"


class Limits:
    """Raises LimitExceeded (413) naming the field, its size and the EMS_LIMITS__* setting it breaks."""

    def __init__(self, settings: LimitSettings) -> None:
        self.settings = settings

    def check(self, *models: BaseModel, **values: object) -> None:
        """Check request models and named values (query and path parameters)."""
        for model in models:
            self._model(model, "")
        for name, value in values.items():
            if value is not None:
                self._value(name, value, name)

    def text(self, setting: str, value: str, where: str) -> None:
        limit = getattr(self.settings, setting)
        if len(value) > limit:
            raise LimitExceeded(f"{where} has {len(value)} characters; the limit is {limit} ({env_name(setting)})")

    def count(self, setting: str, n: int, where: str, what: str = "items") -> None:
        limit = getattr(self.settings, setting)
        if n > limit:
            raise LimitExceeded(f"{where} has {n} {what}; the limit is {limit} ({env_name(setting)})")

    def number(self, setting: str, value: int, name: str) -> None:
        limit = getattr(self.settings, setting)
        if value > limit:
            raise LimitExceeded(f"{name}={value} exceeds the limit {limit} ({env_name(setting)})")

    def body(self, size: int) -> None:
        """A request body (the middleware: from Content-Length, then as it arrives)."""
        if size > self.settings.max_body_bytes:
            raise LimitExceeded(f"request body exceeds {self.settings.max_body_bytes} bytes "
                                f"({env_name('max_body_bytes')})")

    def session_steps(self, n: int) -> None:
        """A session's step count after an append (the steps already stored plus the new ones)."""
        if n > self.settings.max_steps:
            raise LimitExceeded(f"session would have {n} steps; the limit is {self.settings.max_steps} "
                                f"({env_name('max_steps')})")

    def session_bytes(self, size: int) -> None:
        """A session's run may not outgrow what one POST /v1/episodes could carry: it could never be finished."""
        if size > self.settings.max_body_bytes:
            raise LimitExceeded(f"the session's run would be {size} bytes; the limit is "
                                f"{self.settings.max_body_bytes} ({env_name('max_body_bytes')}: a finished session "
                                "is stored like one posted run)")

    def merged_items(self, n: int, where: str) -> None:
        """A facts list after merging a request into what is stored."""
        if n > self.settings.max_items:
            raise LimitExceeded(f"{where} would hold {n} items; the limit is {self.settings.max_items} "
                                f"({env_name('max_items')})")

    def _model(self, model: BaseModel, prefix: str) -> None:
        for name, value in model.__dict__.items():
            if value is not None:
                self._value(name, value, prefix + name)

    def _value(self, name: str, value: object, where: str) -> None:
        if isinstance(value, str):
            self.text(TEXT_LIMITS.get(name, DEFAULT_TEXT), value, where)
        elif isinstance(value, BaseModel):
            self._model(value, where + ".")
        elif isinstance(value, bool):
            return
        elif isinstance(value, int):
            if name in NUMBER_LIMITS:
                self.number(NUMBER_LIMITS[name], value, name)
        elif isinstance(value, list):
            self.count(COUNT_LIMITS.get(name, DEFAULT_COUNT), len(value), where)
            for i, item in enumerate(value):
                if isinstance(item, str | BaseModel):  # raw dicts (batch items) are checked one by one later
                    self._value(name, item, f"{where}.{i}")
        elif isinstance(value, dict) and name == "tags":
            self.count("max_tags", len(value), where, "tags")
            for key, item in value.items():
                self.text("max_name_chars", key, f"{where} key {key[:40]!r}")
                if isinstance(item, str):
                    self.text("max_tag_chars", item, f"{where}.{key[:40]}")


def _injected(parameter: inspect.Parameter) -> bool:
    """A parameter FastAPI fills in (`= Depends(...)` or `Annotated[..., Depends(...)]`), not the caller's input."""
    if isinstance(parameter.default, params.Depends):
        return True
    annotation = parameter.annotation
    return get_origin(annotation) is Annotated and any(isinstance(m, params.Depends) for m in get_args(annotation)[1:])


def within_limits(route: Callable[P, R]) -> Callable[P, R]:
    """Check a route's request body and its path and query values against its `limits` argument before the route
    runs.

    A wrapper rather than a FastAPI dependency: the MCP tools call the route functions themselves, and a
    dependency would hold only HTTP callers to the limits. Parameters FastAPI injects (dependencies) are not the
    caller's input and are skipped; a model is walked field by field, a plain value checked under its name.
    """
    parameters = inspect.signature(route, eval_str=True).parameters
    names = list(parameters)  # FastAPI passes keywords; the MCP tools pass the first ones by position
    injected = {name for name, p in parameters.items() if _injected(p)}

    @functools.wraps(route)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        arguments: dict[str, Any] = dict(zip(names, args, strict=False)) | kwargs
        limits: Limits = arguments["limits"]
        for name, value in arguments.items():
            if name in injected or value is None:
                continue
            if isinstance(value, BaseModel):
                limits.check(value)
            else:
                limits.check(**{name: value})
        return route(*args, **kwargs)

    return checked
