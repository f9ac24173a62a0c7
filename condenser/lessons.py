"""Lessons learned from a run: failure -> recovery patterns (pure; the service stores and dedups them)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from condenser.models import Step, Trajectory, domain_of
from condenser.patterns import action_target, action_verb, describe_action, normalize_error

_CMD = re.compile(r"^\s*([A-Za-z_]+)")
NOOP_ERROR = "the planned element was not found on the page; nothing was executed"
_INTENDED = re.compile(r"\b(click|type|fill|select|search|hover|press|scroll|go|navigat)\w*", re.I)
_PLACEHOLDER_ONLY = re.compile(r"^[\s<>a-z]*$")


@dataclass(frozen=True)
class LessonCandidate:
    """One lesson a run teaches: when `failed_command` fails with `error_pattern`, do `recovery`."""

    failed_command: str
    error_pattern: str
    recovery: list[str] = field(default_factory=list)
    domain: str | None = None
    site: str | None = None  # the recovery itself is tied to this site (it navigates there)

    @property
    def lesson(self) -> str:
        return f"When {self.failed_command} fails with '{self.error_pattern}', recover with: " + " -> ".join(self.recovery)

    @property
    def generic(self) -> bool:
        """One command with no target of its own ("try click instead") is too generic to be a best practice."""
        return len(self.recovery) == 1 and not [w for w in self.recovery[0].split()[1:] if not w.startswith("<")]


def command_of(action: str) -> str:
    """The command word of an action as the agent wrote it (`fill`, `select_option`, `click`)."""
    m = _CMD.match(action)
    return m.group(1).lower() if m else action.strip().split(" ")[0].lower()


def substantive(error: str) -> bool:
    """An error worth learning from: it says something beyond placeholders and is not a bare code."""
    norm = normalize_error(error)
    words = [w for w in re.findall(r"[a-z]{3,}", norm) if w not in {"str", "url"}]
    return len(words) >= 2 and not _PLACEHOLDER_ONLY.fullmatch(norm.replace("<n>", "").replace("<str>", "")) or len(words) >= 3


def _recovery_text(action: str, thought: str | None) -> tuple[str, str | None]:
    """How a recovery step is worded in a lesson (typed values become <text>), and the site it goes to."""
    verb = action_verb(action)
    if verb in {"type", "search"}:
        return f"{verb} <text>", None
    if verb == "navigate":
        target = action_target(action)
        host = domain_of(target.split()[-1]) if target else None
        return f"navigate to {host or '<url>'}", host
    return describe_action(action, thought).replace(" (an element on the page)", ""), None


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
        error, failed = step.error, command_of(step.action)
        if not error and action_verb(step.action) == "none":
            # An agent that logs `None` planned an action whose element was not there (WebCanvas does this):
            # a failure of the command it meant to run.
            error = NOOP_ERROR
            m = _INTENDED.search((step.thought or "").split("Action description:", 1)[-1])
            failed = m.group(1).lower().replace("navigat", "navigate") if m else "none"
        if not error or not substantive(error):
            continue
        recovery: list[Step] = []
        j = i + 1
        while j < len(steps) and not steps[j].failed and action_verb(steps[j].action) != "none" and len(recovery) < keep:
            recovery.append(steps[j])
            j += 1
        if not recovery:
            continue
        if command_of(recovery[0].action) == failed:
            continue
        pattern = normalize_error(error)
        if (failed, pattern) in seen:
            continue
        seen.add((failed, pattern))
        texts = [_recovery_text(s.action, s.thought) for s in recovery]
        site = next((host for _, host in texts if host), None)
        out.append(LessonCandidate(failed, pattern, [t for t, _ in texts], trajectory.domain, site))
    return out
