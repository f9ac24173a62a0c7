"""Coach data: the partial run, the neighbours it is compared with, and the Guidance it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr

from condenser import Step, Trajectory


class PartialRun(Trajectory):
    """A run in progress: like a Trajectory, but it may have no steps yet and has no outcome."""

    steps: list[Step] = Field(default_factory=list)


@dataclass(frozen=True)
class Neighbour:
    """A retrieved episode, as the coach needs it (precomputed at ingest, no I/O here)."""

    id: int
    similarity: float
    success: bool | None
    domain: str | None
    task: str
    summary: str
    trust: float = 1.0
    n_steps: int = 0
    error_patterns: list[str] = field(default_factory=list)
    failure_categories: list[str] = field(default_factory=list)
    steps_brief: list[dict[str, Any]] = field(default_factory=list)
    verified: bool = True
    agent: str | None = None


class Evidence(BaseModel):
    episode_id: int
    similarity: float
    success: bool | None
    domain: str | None
    task: str
    summary: str


class Reason(BaseModel):
    """One feature's part in the failure risk (for developers; never shown to the agent)."""

    feature: str
    value: float
    weight: float
    contribution: float


class SystemMessage(BaseModel):
    role: str = "system"
    content: str


class Guidance(BaseModel):
    """What the coach returns: design section 5, appendable to an OpenAI-style message list as-is."""

    intervene: bool
    failure_risk: float = Field(ge=0, le=1)
    confidence: float = Field(ge=0, le=1)
    advice: str
    suggested_action: str | None
    rationale: str
    error_to_avoid: str | None
    failure_categories: list[str]
    evidence: list[Evidence]
    system_message: SystemMessage | None
    reasons: list[Reason] = Field(default_factory=list, description="features behind the risk (developers only)")
    signals: list[str] = Field(default_factory=list, description="what the run itself shows: repeat, stall, errors, "
                               "struggle, wall:consent|login|captcha|not_found|blocked|empty_results")
    plan: list[str] = Field(default_factory=list, description="next steps of a success on the same site, in words")
    _suggested_norm: str | None = PrivateAttr(default=None)
    _away: bool = PrivateAttr(default=False)  # the memory plan is for the task's site, not the one the agent is on
    _source: str = PrivateAttr(default="template")
    _heard: tuple[bool, bool] = PrivateAttr(default=(True, True))  # (the run itself, earlier runs) said something
    _error_said: bool = PrivateAttr(default=False)  # the advice already says what error_to_avoid names

    @property
    def suggested_norm(self) -> str | None:
        """The normalized form (verb + target) of the suggested action, for evaluation."""
        return self._suggested_norm

    @property
    def source(self) -> str:
        """`template` or `llm`: who wrote the advice."""
        return self._source


@dataclass(frozen=True)
class Signal:
    """One finding about the run: its kind, how sure we are, and what the agent reads."""

    kind: str
    confidence: float
    message: str
    facts: dict[str, object] = field(default_factory=dict)
