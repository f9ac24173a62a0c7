"""Evaluation metrics against values computed by hand on tiny inputs."""

from __future__ import annotations

import pytest

from ems_service.evaluation import brier, calibration_bins, mrr, precision_at_k, roc_auc, roc_curve


def test_auc_by_hand():
    # positives 0.9, 0.4; negatives 0.5, 0.1 -> pairs (0.9>0.5, 0.9>0.1, 0.4<0.5, 0.4>0.1) = 3/4
    assert roc_auc([0.9, 0.4, 0.5, 0.1], [1, 1, 0, 0]) == pytest.approx(0.75)
    assert roc_auc([0.5, 0.5], [1, 0]) == pytest.approx(0.5)  # a tie counts half
    assert roc_auc([0.1, 0.2, 0.3], [1, 1, 1]) is None
    assert roc_auc([0.2, 0.8], [1, 0]) == pytest.approx(0.0)


def test_roc_curve_by_hand():
    fpr, tpr = roc_curve([0.9, 0.4, 0.5, 0.1], [1, 1, 0, 0])
    assert fpr == [0.0, 0.0, 0.5, 0.5, 1.0]
    assert tpr == [0.0, 0.5, 0.5, 1.0, 1.0]


def test_brier_by_hand():
    assert brier([0.8, 0.3], [1, 0]) == pytest.approx(((0.2 ** 2) + (0.3 ** 2)) / 2)
    assert brier([], []) is None


def test_calibration_bins():
    bins = calibration_bins([0.05, 0.15, 0.12, 0.95], [0, 1, 0, 1], bins=10)
    assert bins == [
        {"bin": 0, "predicted": pytest.approx(0.05), "observed": 0.0, "count": 1},
        {"bin": 1, "predicted": pytest.approx(0.135), "observed": 0.5, "count": 2},
        {"bin": 9, "predicted": pytest.approx(0.95), "observed": 1.0, "count": 1},
    ]


def test_precision_at_k_and_mrr_by_hand():
    rel = [[True, False, True, False, False], [False, False, False, True, True], [False] * 5]
    assert precision_at_k(rel, 1) == pytest.approx(1 / 3)
    assert precision_at_k(rel, 5) == pytest.approx((2 / 5 + 2 / 5 + 0) / 3)
    assert mrr(rel) == pytest.approx((1 + 1 / 4 + 0) / 3)
    assert precision_at_k([[True]], 5) == pytest.approx(1 / 5)
    assert mrr([]) is None
