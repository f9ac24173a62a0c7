"""Fitting the failure-risk model to a namespace's stored runs: the coach's one use of numpy.

Kept apart from coach.risk so that scoring, and every client of the coach's models (the SDK), never loads numpy;
`coach.fit` and `coach.log_loss` import this module on first use.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from coach.features import FEATURES
from coach.risk import SIGNS, RiskModel

Array = npt.NDArray[np.float64]


def _sigmoid(z: Array) -> Array:
    """coach.risk.sigmoid over an array (the same clip, so a fitted threshold and a scored risk agree)."""
    out: Array = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
    return out


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


def _newton(z: Array, y: Array, l2: float, iterations: int) -> Array:
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
