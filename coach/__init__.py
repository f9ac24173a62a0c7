"""coach: partial trajectory + similar episodes -> failure risk + Guidance. Pure Python; no I/O.

`fit` and `log_loss` (coach.fitting, numpy) load on first use: the SDK imports the coach's models and never
needs numpy.
"""

from typing import TYPE_CHECKING, Any

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
from coach.evidence import as_data, typed_values_masked
from coach.features import FEATURES, run_features, seed_heuristic, step_failed
from coach.lessons import lesson_words
from coach.models import Evidence, Guidance, Neighbour, PartialRun, Reason, Signal, SystemMessage
from coach.plan import FailurePoint, Plan, failure_point, success_plan
from coach.risk import DEFAULT_WEIGHTS, SIGNS, RiskModel
from coach.runstate import run_signals
from coach.safety import EVIDENCE_CLOSE, EVIDENCE_OPEN, sanitize
from coach.steps import step_words
from coach.words import carries_ids, error_class, label, orders_reader, shows_internals

if TYPE_CHECKING:
    from coach.fitting import fit, log_loss

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
    "as_data",
    "check_agent_words",
    "error_class",
    "failure_point",
    "label",
    "orders_reader",
    "lesson_words",
    "run_signals",
    "shows_internals",
    "step_words",
    "success_plan",
    "typed_values_masked",
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

if not TYPE_CHECKING:  # mypy sees the imports above; a module __getattr__ would make every unknown name Any to it

    def __getattr__(name: str) -> Any:
        """The numpy-backed names, imported when first asked for (PEP 562)."""
        if name in {"fit", "log_loss"}:
            from coach import fitting

            return getattr(fitting, name)
        raise AttributeError(f"module 'coach' has no attribute {name!r}")
