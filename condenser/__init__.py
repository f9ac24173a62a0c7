"""condenser: trajectory -> Episode. Pure Python and pydantic; no I/O."""

from condenser.condense import VERIFIED_SOURCES, condense, is_verified, trajectory_hash, trust_of
from condenser.intent import INTENTS, classify_intent
from condenser.lessons import LessonCandidate, command_of, extract_lessons
from condenser.models import ActionCall, Episode, FailureCategory, Outcome, Step, Trajectory, domain_of
from condenser.patterns import (
    action_target,
    action_verb,
    describe_action,
    error_patterns,
    failure_categories,
    loop_detected,
    normalize_action,
    normalize_error,
)
from condenser.redact import redact_text, redact_trajectory
from condenser.sites import is_public_suffix, registrable_domain
from condenser.summary import embed_text, summarize, typed_masked, url_pattern
from condenser.tasks import (
    SAME_TEMPLATE,
    derive_task_id,
    normalize_task,
    task_on_site,
    task_template,
    template_similarity,
)

__all__ = [
    "INTENTS",
    "SAME_TEMPLATE",
    "derive_task_id",
    "normalize_task",
    "registrable_domain",
    "is_public_suffix",
    "task_on_site",
    "task_template",
    "template_similarity",
    "VERIFIED_SOURCES",
    "LessonCandidate",
    "classify_intent",
    "command_of",
    "extract_lessons",
    "is_verified",
    "ActionCall",
    "Episode",
    "FailureCategory",
    "Outcome",
    "Step",
    "Trajectory",
    "action_target",
    "action_verb",
    "condense",
    "describe_action",
    "domain_of",
    "embed_text",
    "typed_masked",
    "error_patterns",
    "failure_categories",
    "loop_detected",
    "normalize_action",
    "normalize_error",
    "redact_text",
    "redact_trajectory",
    "summarize",
    "trajectory_hash",
    "trust_of",
    "url_pattern",
]
