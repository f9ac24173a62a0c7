"""coach: partial trajectory + similar episodes -> failure risk + Guidance. Pure Python; no I/O."""

from coach.advise import CoachConfig, LLMAdvice, advice_key, advise, parse_llm_json, render_system_message
from coach.align import action_similarity, match_point, next_action
from coach.features import FEATURES, run_features, seed_heuristic, step_failed
from coach.models import Evidence, Guidance, Neighbour, PartialRun, SystemMessage
from coach.risk import DEFAULT_WEIGHTS, RiskModel, fit, log_loss
from coach.safety import EVIDENCE_CLOSE, EVIDENCE_OPEN, sanitize

__all__ = [
    "DEFAULT_WEIGHTS",
    "EVIDENCE_CLOSE",
    "EVIDENCE_OPEN",
    "FEATURES",
    "CoachConfig",
    "Evidence",
    "Guidance",
    "LLMAdvice",
    "Neighbour",
    "PartialRun",
    "RiskModel",
    "SystemMessage",
    "action_similarity",
    "advice_key",
    "advise",
    "fit",
    "log_loss",
    "match_point",
    "next_action",
    "parse_llm_json",
    "render_system_message",
    "run_features",
    "sanitize",
    "seed_heuristic",
    "step_failed",
]
