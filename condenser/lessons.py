"""Lessons learned from a run: failure -> recovery patterns (pure; the service stores and dedups them)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from condenser.models import Trajectory
from condenser.patterns import describe_action, normalize_action, normalize_error

_CMD = re.compile(r"^\s*([A-Za-z_]+)")
_PLACEHOLDER_ONLY = re.compile(r"^[\s<>a-z]*$")


@dataclass(frozen=True)
class LessonCandidate:
    """One lesson a run teaches: when `failed_command` fails with `error_pattern`, do `recovery`."""

    failed_command: str
    error_pattern: str
    recovery: list[str] = field(default_factory=list)
    domain: str | None = None

    @property
    def lesson(self) -> str:
        return f"When {self.failed_command} fails with '{self.error_pattern}', recover with: " + " -> ".join(self.recovery)

    @property
    def generic(self) -> bool:
        """One bare command ("try click instead") is too generic to become a best practice."""
        return len(self.recovery) == 1 and len(self.recovery[0].split()) <= 1


def command_of(action: str) -> str:
    """The command word of an action as the agent wrote it (`fill`, `select_option`, `click`)."""
    m = _CMD.match(action)
    return m.group(1).lower() if m else action.strip().split(" ")[0].lower()


def substantive(error: str) -> bool:
    """An error worth learning from: it says something beyond placeholders and is not a bare code."""
    norm = normalize_error(error)
    words = [w for w in re.findall(r"[a-z]{3,}", norm) if w not in {"str", "url"}]
    return len(words) >= 2 and not _PLACEHOLDER_ONLY.fullmatch(norm.replace("<n>", "").replace("<str>", "")) or len(words) >= 3


def _recovery_text(action: str, thought: str | None) -> str:
    desc = describe_action(action, thought)
    return desc.replace(" (an element on the page)", "")


def extract_lessons(trajectory: Trajectory) -> list[LessonCandidate]:
    """Failure -> recovery patterns: a failed step followed by ok steps with a different command.

    A run that ends in success keeps up to three recovery actions (so "select fails on an ARIA combobox ->
    click the combobox -> click the option" is one lesson); otherwise only the immediate ok action.
    """
    steps = trajectory.steps
    keep = 3 if trajectory.outcome.success else 1
    out: list[LessonCandidate] = []
    seen: set[tuple[str, str]] = set()
    for i, step in enumerate(steps):
        if not step.error or not substantive(step.error):
            continue
        recovery = []
        j = i + 1
        while j < len(steps) and not steps[j].failed and len(recovery) < keep:
            recovery.append(steps[j])
            j += 1
        if not recovery:
            continue
        failed = command_of(step.action)
        if command_of(recovery[0].action) == failed and normalize_action(recovery[0].action) == normalize_action(step.action):
            continue
        if command_of(recovery[0].action) == failed:
            continue
        pattern = normalize_error(step.error)
        if (failed, pattern) in seen:
            continue
        seen.add((failed, pattern))
        out.append(LessonCandidate(failed, pattern, [_recovery_text(s.action, s.thought) for s in recovery],
                                   trajectory.domain))
    return out
