"""coach: partial trajectory + similar episodes -> failure risk + Guidance. Pure Python; no I/O."""

from coach.advise import (
    CoachConfig,
    LLMAdvice,
    advice_key,
    advise,
    check_agent_words,
    parse_llm_json,
    render_system_message,
)
from coach.align import action_similarity, match_point, next_action
from coach.features import FEATURES, run_features, seed_heuristic, step_failed
from coach.models import Evidence, Guidance, Neighbour, PartialRun, Reason, SystemMessage
from coach.plan import FailurePoint, Plan, failure_point, success_plan
from coach.risk import DEFAULT_WEIGHTS, SIGNS, RiskModel, fit, log_loss
from coach.runstate import Signal, run_signals
from coach.safety import EVIDENCE_CLOSE, EVIDENCE_OPEN, sanitize
from coach.words import carries_ids, error_class, label, shows_internals, step_words

__all__ = [
    "DEFAULT_WEIGHTS",
    "EVIDENCE_CLOSE",
    "EVIDENCE_OPEN",
    "FEATURES",
    "SIGNS",
    "FailurePoint",
    "Plan",
    "Reason",
    "Signal",
    "carries_ids",
    "check_agent_words",
    "error_class",
    "failure_point",
    "label",
    "run_signals",
    "shows_internals",
    "step_words",
    "success_plan",
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
