"""Evaluation metrics: ROC AUC, Brier score, calibration bins, P@k and MRR (plain numpy, checked by hand)."""

from __future__ import annotations

import numpy as np


def roc_auc(scores: list[float], labels: list[int]) -> float | None:
    """Probability that a random positive scores above a random negative (ties count half); None if one class."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.int64)
    pos, neg = s[y == 1], s[y == 0]
    if len(pos) == 0 or len(neg) == 0:
        return None
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s), dtype=np.float64)
    sorted_s = s[order]
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    rank_sum = ranks[y == 1].sum()
    return float((rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def roc_curve(scores: list[float], labels: list[int]) -> tuple[list[float], list[float]]:
    """(false positive rates, true positive rates) over all thresholds, from (0,0) to (1,1)."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.int64)
    p, n = max(int(y.sum()), 1), max(int((1 - y).sum()), 1)
    fpr, tpr = [0.0], [0.0]
    for threshold in sorted(set(s.tolist()), reverse=True):
        pred = s >= threshold
        tpr.append(float((pred & (y == 1)).sum() / p))
        fpr.append(float((pred & (y == 0)).sum() / n))
    if fpr[-1] != 1.0 or tpr[-1] != 1.0:
        fpr.append(1.0)
        tpr.append(1.0)
    return fpr, tpr


def brier(probabilities: list[float], labels: list[int]) -> float | None:
    """Mean squared error of probabilities against 0/1 outcomes."""
    if not labels:
        return None
    p = np.asarray(probabilities, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    return float(((p - y) ** 2).mean())


def calibration_bins(probabilities: list[float], labels: list[int], bins: int = 10) -> list[dict]:
    """Per equal-width bin: mean predicted probability, observed rate, count (empty bins left out)."""
    p = np.asarray(probabilities, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    out = []
    edges = np.linspace(0, 1, bins + 1)
    for b in range(bins):
        mask = (p >= edges[b]) & ((p < edges[b + 1]) if b < bins - 1 else (p <= 1))
        if mask.any():
            out.append({"bin": b, "predicted": float(p[mask].mean()), "observed": float(y[mask].mean()),
                        "count": int(mask.sum())})
    return out


def precision_at_k(relevant: list[list[bool]], k: int) -> float | None:
    """Mean over queries of the share of the top-k results that are relevant (missing results count as not)."""
    if not relevant:
        return None
    return float(np.mean([sum(r[:k]) / k for r in relevant]))


def mrr(relevant: list[list[bool]]) -> float | None:
    """Mean reciprocal rank of the first relevant result (0 when none is)."""
    if not relevant:
        return None
    return float(np.mean([next((1.0 / (i + 1) for i, r in enumerate(rs) if r), 0.0) for rs in relevant]))
