"""`webcoach eval`: coaching quality measured offline on trajectories files."""

from ems_service.evaluation.metrics import brier, calibration_bins, mrr, precision_at_k, roc_auc, roc_curve
from ems_service.evaluation.protocol import EvalConfig, evaluate

__all__ = ["EvalConfig", "brier", "calibration_bins", "evaluate", "mrr", "precision_at_k", "roc_auc", "roc_curve"]
