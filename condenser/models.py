"""Wire-format models: Step, Outcome, Trajectory (what agents post) and Episode (what is stored)."""

from __future__ import annotations

import json
import math
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, field_validator, model_validator


class FailureCategory(StrEnum):
    """The closed set of failure categories detected by rules (design section 2)."""

    loop = "loop"
    step_limit = "step_limit"
    timeout = "timeout"
    captcha_or_bot_wall = "captcha_or_bot_wall"
    login_wall = "login_wall"
    consent_or_overlay = "consent_or_overlay"
    element_not_found = "element_not_found"
    navigation_error = "navigation_error"
    http_error = "http_error"
    wrong_answer = "wrong_answer"
    other = "other"


LabelSource = Literal["self_report", "judge", "human", "benchmark"]
Source = Literal["self", "seed", "import"]

_STRICT = ConfigDict(extra="ignore", allow_inf_nan=False, str_strip_whitespace=False)


def _not_text(value: object) -> bool:
    """True for a string no database can store as text: NUL, or a lone surrogate (not valid Unicode)."""
    if not isinstance(value, str):
        return False
    if "\x00" in value:
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def reject_nul(cls: type, data: Any) -> Any:  # cls unused: the signature of a model validator
    """NUL (U+0000) is never text a browser shows and PostgreSQL cannot store it; a lone surrogate ("\\udfff")
    is not Unicode text at all (it broke every later read of its row): refuse both up front."""
    if isinstance(data, dict):
        for key, value in data.items():
            values = [*value.keys(), *value.values()] if isinstance(value, dict) else [value]
            if _not_text(key) or any(_not_text(v) for v in values):
                raise ValueError(f"{key}: NUL characters (\\u0000) and lone surrogates are not allowed in text")
    return data


class ActionCall(BaseModel):
    """An action given as an object; rendered to `name(arg, ...)`."""

    model_config = _STRICT
    name: str = Field(min_length=1)
    args: list[Any] | dict[str, Any] = Field(default_factory=list)

    @field_validator("args")
    @classmethod
    def _finite(cls, args: list[Any] | dict[str, Any]) -> list[Any] | dict[str, Any]:
        """Numbers are finite: JSON has no NaN or Infinity (1e400 parses to Infinity; it would be stored as such)."""
        stack: list[Any] = [args]
        while stack:  # iterative: deep arguments cannot exhaust the stack
            value = stack.pop()
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError("action arguments must be finite numbers (not NaN or Infinity)")
            if isinstance(value, dict):
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)
        return args

    def render(self) -> str:
        if isinstance(self.args, dict):
            inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in self.args.items())
        else:
            inner = ", ".join(json.dumps(v, ensure_ascii=False) for v in self.args)
        return f"{self.name}({inner})"


class Step(BaseModel):
    """One agent action and what it led to; `error` set means the step failed."""

    model_config = _STRICT
    url: str | None = None
    observation: str | None = None
    thought: str | None = None
    action: str
    error: str | None = None
    reward: StrictFloat | None = None  # strict: "0.5" is not a number
    ts: datetime | None = None

    _no_nul = model_validator(mode="before")(reject_nul)

    @field_validator("action", mode="before")
    @classmethod
    def _render_action(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return ActionCall.model_validate(value).render()
        return value

    @field_validator("action")
    @classmethod
    def _non_empty_action(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("action must be a non-empty string")
        return value

    @property
    def failed(self) -> bool:
        """True when the step reported an error or a negative reward."""
        return bool(self.error) or (self.reward is not None and self.reward < 0)


class Outcome(BaseModel):
    """How a run ended and who said so."""

    model_config = _STRICT
    success: StrictBool | None = None  # strict: "yes" is not true
    label_source: LabelSource = "self_report"
    status: str | None = None
    verified: StrictBool = False


def domain_of(url: str | None) -> str | None:
    """Host of `url` without `www.` and port, lower-cased; None when there is no host."""
    if not url:
        return None
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    try:
        host = urlsplit(text).hostname
    except ValueError:
        return None
    if not host or "." not in host:
        return None
    host = host.lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host


class Trajectory(BaseModel):
    """A finished (or partial) run as an agent posts it."""

    model_config = _STRICT
    task: str = Field(min_length=1)
    steps: list[Step] = Field(min_length=1)
    outcome: Outcome = Field(default_factory=Outcome)
    start_url: str | None = None
    domain: str | None = None
    agent: str | None = None
    model: str | None = None
    task_id: str | None = None
    source: Source = "self"
    tags: dict[str, str] = Field(default_factory=dict)

    _no_nul = model_validator(mode="before")(reject_nul)

    @field_validator("task")
    @classmethod
    def _task_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("task must not be blank")
        return value

    @model_validator(mode="after")
    def _derive_domain(self) -> Trajectory:
        if self.domain:
            self.domain = domain_of(self.domain) or self.domain.strip().lower()
        else:
            urls = [self.start_url] + [s.url for s in self.steps]
            self.domain = next((d for d in map(domain_of, urls) if d), None)
        return self

    @property
    def actions(self) -> list[str]:
        return [s.action for s in self.steps]


class Episode(BaseModel):
    """A condensed trajectory: what is stored as one row and one vector."""

    namespace: str = "default"
    trajectory_hash: str
    task: str
    domain: str | None
    url_pattern: str | None
    summary: str
    embed_text: str
    success: bool | None
    label_source: LabelSource
    status: str | None = None
    trust: float
    error_patterns: list[str]
    failure_categories: list[FailureCategory]
    n_steps: int
    actions: list[str]
    steps_brief: list[dict[str, Any]] = Field(default_factory=list)
    intent: str = "other"
    verified: bool = False
    agent: str | None = None
    model: str | None = None
    task_id: str | None = None
    source: Source = "self"
    tags: dict[str, str] = Field(default_factory=dict)
    trajectory: Trajectory
