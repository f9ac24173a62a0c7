"""Input limits: every string, list and map of a request is checked against one named EMS_LIMITS__* setting.

One walker over the validated request models, so a new field is covered the day it is added (an unknown text
field falls under EMS_LIMITS__MAX_FIELD_CHARS, an unknown list under EMS_LIMITS__MAX_ITEMS), and the same checks
run on SQLite and PostgreSQL before anything reaches the database.
"""

from __future__ import annotations

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
            if name == "k" and value > self.settings.max_k:
                raise LimitExceeded(f"k={value} exceeds the limit {self.settings.max_k} ({env_name('max_k')})")
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
