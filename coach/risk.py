"""Failure risk: a logistic model over run features, with default weights or weights fitted per namespace.

Scoring is plain Python (math.exp gives the same floats as numpy's scalar exp): a client that imports the coach's
models never loads numpy. Fitting, which needs linear algebra, lives in coach.fitting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from coach.features import FEATURES

DEFAULT_WEIGHTS = {
    "recent_error_rate": 1.6,
    "error_streak": 1.2,
    "max_repeat": 1.2,
    "loop": 0.8,
    "url_stall": 0.5,
    "none_actions": 1.5,
    "reward_max": -1.5,
    "no_reward_progress": 0.6,
    "step_ratio": 0.6,
    "nb_fail_rate": 2.0,
    "nb_best_sim": 0.0,
    "pattern_match": 1.0,
    "category_match": 0.5,
    "task_complexity": 0.3,
    "struggle": 0.8,
    "renavigate": 0.5,
    "scroll_share": 0.3,
    "nb_agent_fail_rate": 0.5,
    "success_path": -0.5,
    "failure_path": 0.5,
}
DEFAULT_BIAS = -2.2

# The direction each feature's words claim: +1 "more of it means more risk", -1 less risk, 0 neutral words.
# A fitted weight against its direction is dropped (set to 0 and the rest refitted), so no reason ever reads
# "recent steps failed" for a run whose steps did not fail.
SIGNS = {
    "recent_error_rate": 1, "error_streak": 1, "max_repeat": 1, "loop": 1, "url_stall": 1, "none_actions": 1,
    "reward_max": -1, "no_reward_progress": 1, "step_ratio": 0, "nb_fail_rate": 1, "nb_best_sim": 0,
    "pattern_match": 1, "category_match": 1, "task_complexity": 0, "struggle": 1, "renavigate": 0,
    "scroll_share": 0, "nb_agent_fail_rate": 1, "success_path": -1, "failure_path": 1,
}

_LABELS = {
    "recent_error_rate": "recent steps failed",
    "error_streak": "consecutive failed steps",
    "max_repeat": "the same action repeated",
    "loop": "a loop without progress",
    "url_stall": "stuck on one page",
    "none_actions": "actions that found no element",
    "reward_max": "progress made",
    "no_reward_progress": "no progress in the last steps",
    "step_ratio": "steps used relative to similar successes",
    "nb_fail_rate": "similar past runs mostly failed",
    "nb_best_sim": "similarity of the closest past run",
    "pattern_match": "errors that similar failed runs also hit",
    "category_match": "a failure category seen in similar failed runs",
    "task_complexity": "words in the task",
    "struggle": "the agent's own words say it is stuck",
    "renavigate": "share of navigation or search steps",
    "scroll_share": "share of scroll steps",
    "nb_agent_fail_rate": "the same agent's outcomes on similar tasks",
    "success_path": "on the path of a similar success",
    "failure_path": "on the path of a similar failure",
}


def sigmoid(z: float) -> float:
    """The logistic function, clipped at |z| = 30 as the fitted model's (coach.fitting) is."""
    return 1.0 / (1.0 + math.exp(-min(max(z, -30.0), 30.0)))


@dataclass
class RiskModel:
    """risk = sigmoid(bias + sum(w_i * (x_i - mean_i) / scale_i))."""

    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    bias: float = DEFAULT_BIAS
    mean: dict[str, float] = field(default_factory=dict)
    scale: dict[str, float] = field(default_factory=dict)
    kind: str = "default"
    threshold: float | None = None  # fitted: the risk above which at most the healthy budget of successes lie

    def _z(self, features: dict[str, float]) -> dict[str, float]:
        return {
            name: self.weights.get(name, 0.0)
            * (features.get(name, 0.0) - self.mean.get(name, 0.0)) / (self.scale.get(name, 1.0) or 1.0)
            for name in FEATURES
        }

    def score(self, features: dict[str, float]) -> tuple[float, list[tuple[str, float]]]:
        """Risk in [0, 1] and the features that pushed it up, largest first.

        A feature counts as a reason only when its value lies on the side its words name (a signed feature
        above its mean, or below it for a protective one), never for the absence of what it describes.
        """
        parts = self._z(features)
        risk = sigmoid(self.bias + sum(parts.values()))
        reasons = sorted(((n, c) for n, c in parts.items() if c > 0.05 and self._agrees(n, features.get(n, 0.0))),
                         key=lambda x: -x[1])
        return risk, reasons

    def _agrees(self, name: str, value: float) -> bool:
        sign = SIGNS.get(name, 0)
        return sign == 0 or sign * (value - self.mean.get(name, 0.0)) > 0

    def reasons(self, features: dict[str, float], limit: int = 6) -> list[dict[str, float | str]]:
        """The reasons of `score` as (feature, value, weight, contribution) records."""
        _, top = self.score(features)
        return [{"feature": n, "value": round(features.get(n, 0.0), 4), "weight": round(self.weights.get(n, 0.0), 4),
                 "contribution": round(c, 4)} for n, c in top[:limit]]

    def to_dict(self) -> dict[str, Any]:
        return {"weights": self.weights, "bias": self.bias, "mean": self.mean, "scale": self.scale, "kind": self.kind,
                "threshold": self.threshold}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RiskModel:
        return cls(weights=dict(data["weights"]), bias=float(data["bias"]), mean=dict(data.get("mean", {})),
                   scale=dict(data.get("scale", {})), kind=data.get("kind", "fitted"), threshold=data.get("threshold"))


def describe_reasons(reasons: list[tuple[str, float]], features: dict[str, float], limit: int = 3) -> str:
    """The top reasons in words with their values, for developers (the rationale)."""
    return "; ".join(f"{_LABELS.get(n, n)} ({features.get(n, 0.0):.2f})" for n, _ in reasons[:limit])
