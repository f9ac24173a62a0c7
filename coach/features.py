"""Features of a partial run and its neighbours, the inputs of the failure-risk model."""

from __future__ import annotations

import re
import statistics
from collections import Counter

from coach.align import match_point
from coach.models import Neighbour, PartialRun
from condenser import Step, action_verb, loop_detected, normalize_error

FEATURES = [
    "recent_error_rate",
    "error_streak",
    "max_repeat",
    "loop",
    "url_stall",
    "none_actions",
    "reward_max",
    "no_reward_progress",
    "step_ratio",
    "nb_fail_rate",
    "nb_best_sim",
    "pattern_match",
    "category_match",
    "task_complexity",
    "struggle",
    "renavigate",
    "scroll_share",
    "nb_agent_fail_rate",
    "success_path",
    "failure_path",
]
# Words with which agents describe being stuck, in their thoughts, observations and errors.
_STRUGGLE = re.compile(
    r"\b(?:still|again|unable|cannot|can't|couldn't|could not|doesn't|didn't|not (?:working|found|visible|loaded|"
    r"available|able|showing|seem)|no (?:results|option|way)|instead|alternative|another approach|retry|try(?:ing)? "
    r"(?:again|a different|another)|seems? (?:that|like)? ?(?:the|it|this)? ?(?:didn't|did not|isn't|is not|wasn't)|"
    r"stuck|failed|error|wrong|mistake|blocked|captcha|not sure)\b", re.I)
RECENT = 5


def step_failed(step: Step) -> bool:
    """A failed step: an error, a negative reward, or an action that did nothing (element not found)."""
    return step.failed or action_verb(step.action) == "none"


def seed_heuristic(run: PartialRun) -> float:
    """The seed design's risk: share of failed / negative-reward steps among the last five."""
    recent = run.steps[-RECENT:]
    return sum(1 for s in recent if s.failed) / len(recent) if recent else 0.0


def run_features(run: PartialRun, neighbours: list[Neighbour], *, min_similarity: float = 0.0) -> dict[str, float]:
    """Features in [0, ~3] of the run so far and of the episodes similar to it."""
    steps = run.steps
    t = len(steps)
    recent = steps[-RECENT:]
    failed = [step_failed(s) for s in steps]
    streak = 0
    for f in reversed(failed):
        if not f:
            break
        streak += 1
    raw = [" ".join(s.action.lower().split()) for s in steps]
    repeats = Counter(raw[-10:])
    stall = 0
    for i in range(t - 1, 0, -1):
        if steps[i].url and steps[i].url == steps[i - 1].url:
            stall += 1
        else:
            break
    rewards = [s.reward for s in steps if s.reward is not None]
    no_progress = 0.0
    if len(rewards) >= 3:
        no_progress = 1.0 if max(rewards[-3:]) <= max(rewards[:-3] or [0.0]) else 0.0

    close = [n for n in neighbours if n.similarity >= min_similarity]
    labelled = [n for n in close if n.success is not None]
    if labelled:
        weights = [max(n.similarity, 0.0) * n.trust for n in labelled]
        total = sum(weights) or 1.0
        nb_fail = sum(w for w, n in zip(weights, labelled, strict=True) if n.success is False) / total
    else:
        nb_fail = 0.5
    successes = [n.n_steps for n in close if n.success and n.n_steps]
    typical = statistics.median(successes) if successes else 10.0
    fail_patterns = {p for n in close if n.success is False for p in n.error_patterns}
    own_patterns = {f"{action_verb(s.action)}: {normalize_error(s.error)}" for s in steps if s.error}
    fail_categories = {c for n in close if n.success is False for c in n.failure_categories}
    own_categories = set()
    if loop_detected(run):
        own_categories.add("loop")
    if any(action_verb(s.action) == "none" for s in steps):
        own_categories.add("element_not_found")
    texts = [" ".join(t[:5000] for t in (s.thought, s.observation, s.error) if t) for s in recent]  # heads only
    same_agent = [n for n in close if n.success is not None and run.agent and n.agent == run.agent]
    if same_agent:
        w = [max(n.similarity, 0.0) for n in same_agent]
        agent_fail = sum(x for x, n in zip(w, same_agent, strict=True) if n.success is False) / (sum(w) or 1.0)
    else:
        agent_fail = nb_fail
    verbs = [action_verb(s.action) for s in steps]
    def path(success: bool) -> float:
        scores = [match_point(run, n.steps_brief)[1] * n.similarity for n in close
                  if n.success is success and n.steps_brief and steps]
        return max(scores, default=0.0)

    return {
        "success_path": path(True),
        "failure_path": path(False),
        "task_complexity": min(len(run.task.split()) / 40, 1.5),
        "struggle": sum(1 for text in texts if _STRUGGLE.search(text)) / len(texts) if texts else 0.0,
        "renavigate": sum(1 for v in verbs[1:] if v in {"navigate", "search", "back"}) / t if t else 0.0,
        "scroll_share": verbs.count("scroll") / t if t else 0.0,
        "nb_agent_fail_rate": agent_fail,
        "recent_error_rate": sum(1 for s in recent if step_failed(s)) / len(recent) if recent else 0.0,
        "error_streak": min(streak, 5) / 5,
        "max_repeat": min(max(repeats.values(), default=1) - 1, 5) / 5,
        "loop": 1.0 if "loop" in own_categories else 0.0,
        "url_stall": min(stall, 5) / 5,
        "none_actions": sum(1 for s in steps if action_verb(s.action) == "none") / t if t else 0.0,
        "reward_max": max(rewards) if rewards else 0.0,
        "no_reward_progress": no_progress,
        "step_ratio": min(t / max(typical, 1.0), 3.0),
        "nb_fail_rate": nb_fail,
        "nb_best_sim": max((n.similarity for n in neighbours), default=0.0),
        "pattern_match": len(own_patterns & fail_patterns) / len(own_patterns) if own_patterns else 0.0,
        "category_match": 1.0 if own_categories & fail_categories else 0.0,
    }
