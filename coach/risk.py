"""Failure risk: a logistic model over run features, with default weights or weights fitted per namespace."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

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


def _sigmoid(z: np.ndarray | float) -> np.ndarray | float:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


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
        risk = float(_sigmoid(self.bias + sum(parts.values())))
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

    def to_dict(self) -> dict:
        return {"weights": self.weights, "bias": self.bias, "mean": self.mean, "scale": self.scale, "kind": self.kind,
                "threshold": self.threshold}

    @classmethod
    def from_dict(cls, data: dict) -> RiskModel:
        return cls(weights=dict(data["weights"]), bias=float(data["bias"]), mean=dict(data.get("mean", {})),
                   scale=dict(data.get("scale", {})), kind=data.get("kind", "fitted"), threshold=data.get("threshold"))


def describe_reasons(reasons: list[tuple[str, float]], features: dict[str, float], limit: int = 3) -> str:
    return "; ".join(f"{_LABELS.get(n, n)} ({features.get(n, 0.0):.2f})" for n, _ in reasons[:limit])


def fit(samples: list[dict[str, float]], labels: list[int], *, l2: float = 5.0, iterations: int = 50,
        healthy_budget: float | None = 0.1) -> RiskModel:
    """Logistic regression (Newton's method, L2 on standardized features) of failure on features.

    With `healthy_budget`, the model also carries an intervention threshold: the risk that at most that share
    of the successful training prefixes reach, so the coach interrupts few healthy runs whatever the base rate.
    """
    if len(samples) < 10 or len(set(labels)) < 2:
        raise ValueError("need at least 10 samples with both outcomes to fit")
    x = np.array([[s.get(n, 0.0) for n in FEATURES] for s in samples], dtype=np.float64)
    y = np.array(labels, dtype=np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    active = np.ones(z.shape[1], dtype=bool)
    signs = np.array([0] + [SIGNS.get(n, 0) for n in FEATURES])
    for _ in range(len(FEATURES)):  # drop features whose fitted sign contradicts their words, refit the rest
        w = _newton(z[:, active], y, l2, iterations)
        full = np.zeros(z.shape[1])
        full[active] = w
        wrong = (signs * full < 0) & active
        if not wrong.any():
            break
        active &= ~wrong
    w = full
    model = RiskModel(
        weights={n: float(v) for n, v in zip(FEATURES, w[1:], strict=True)},
        bias=float(w[0]),
        mean={n: float(v) for n, v in zip(FEATURES, mean, strict=True)},
        scale={n: float(v) for n, v in zip(FEATURES, scale, strict=True)},
        kind="fitted",
    )
    if healthy_budget is not None:
        healthy = _sigmoid(z[y == 0] @ w)
        model.threshold = float(np.quantile(healthy, 1 - healthy_budget)) if len(healthy) else None
    return model


def _newton(z: np.ndarray, y: np.ndarray, l2: float, iterations: int) -> np.ndarray:
    """L2-regularized logistic regression by Newton's method; column 0 is the (unregularized) bias."""
    w = np.zeros(z.shape[1])
    w[0] = math.log((y.mean() + 1e-6) / (1 - y.mean() + 1e-6))
    reg = np.eye(z.shape[1]) * l2
    reg[0, 0] = 0.0
    for _ in range(iterations):
        p = _sigmoid(z @ w)
        grad = z.T @ (p - y) + reg @ w
        hess = (z * (p * (1 - p))[:, None]).T @ z + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def log_loss(probabilities: list[float], labels: list[int]) -> float:
    """Mean negative log-likelihood of binary labels."""
    p = np.clip(np.array(probabilities, dtype=np.float64), 1e-7, 1 - 1e-7)
    y = np.array(labels, dtype=np.float64)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())
