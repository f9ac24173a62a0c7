"""condense(): trajectory -> Episode (summary, embed text, label, error patterns, categories, hash)."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any

from condenser.intent import classify_intent
from condenser.models import Episode, Trajectory, domain_of
from condenser.patterns import describe_action, error_patterns, failure_categories, normalize_action, normalize_error
from condenser.redact import redact_trajectory
from condenser.summary import embed_text, summarize, url_pattern
from condenser.tasks import derive_task_id

logger = logging.getLogger(__name__)

_LABEL_TRUST = {"human": 1.0, "benchmark": 0.9, "judge": 0.75, "self_report": 0.5}
_SOURCE_TRUST = {"self": 1.0, "import": 0.9, "seed": 0.8}


def trust_of(label_source: str, source: str) -> float:
    """Evidence weight in [0, 1]: human > benchmark > judge > self_report; seed < import < self."""
    return round(_LABEL_TRUST.get(label_source, 0.5) * _SOURCE_TRUST.get(source, 0.8), 4)


VERIFIED_SOURCES = frozenset({"judge", "human", "benchmark"})


def is_verified(label_source: str, flag: bool = False) -> bool:
    """Trust gate: only judge, human or benchmark labels (or an explicit verified flag) count as verified."""
    return flag or label_source in VERIFIED_SOURCES


def trajectory_hash(trajectory: Trajectory) -> str:
    """sha256 of a canonical JSON of (task, domain, actions, outcome)."""
    canonical = {
        "task": " ".join(trajectory.task.split()),
        "domain": trajectory.domain,
        "actions": [" ".join(a.split()) for a in trajectory.actions],
        "outcome": {"success": trajectory.outcome.success, "status": trajectory.outcome.status},
    }
    blob = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def condense(
    trajectory: Trajectory,
    *,
    namespace: str = "default",
    summarize_fn: Callable[[str], str] | None = None,
) -> Episode:
    """Redact and condense a finished trajectory into an Episode (the service adds the embedding).

    `summarize_fn` receives the deterministic summary plus the redacted run as a prompt and returns a
    better summary; any failure of it falls back to the deterministic one.
    """
    clean = redact_trajectory(trajectory)
    categories = failure_categories(clean)
    patterns = error_patterns(clean)
    summary = summarize(clean, categories, patterns)
    if summarize_fn is not None:
        try:
            better = summarize_fn(_summary_prompt(clean, summary)).strip()
            if better:
                summary = better[:2000]
        except Exception as exc:  # noqa: BLE001 - any summarizer failure falls back to the template
            logger.warning("summarizer failed, using the deterministic summary: %s", type(exc).__name__)
    on_site = [u for u in [clean.start_url] + [s.url for s in clean.steps] if u]
    first_url = next((u for u in on_site if clean.domain and (domain_of(u) or "").endswith(clean.domain)), None)
    return Episode(
        namespace=namespace,
        trajectory_hash=trajectory_hash(clean),
        task=clean.task,
        domain=clean.domain,
        url_pattern=url_pattern(first_url),
        summary=summary,
        embed_text=embed_text(clean.task, clean.domain, clean.actions),
        success=clean.outcome.success,
        label_source=clean.outcome.label_source,
        status=clean.outcome.status,
        trust=trust_of(clean.outcome.label_source, clean.source),
        error_patterns=patterns,
        failure_categories=categories,
        n_steps=len(clean.steps),
        actions=clean.actions,
        steps_brief=steps_brief(clean),
        intent=classify_intent(clean.task),
        verified=is_verified(clean.outcome.label_source, clean.outcome.verified),
        agent=clean.agent,
        model=clean.model,
        task_id=clean.task_id or derive_task_id(clean.task),
        source=clean.source,
        tags=clean.tags,
        trajectory=clean,
    )


def steps_brief(trajectory: Trajectory) -> list[dict[str, Any]]:
    """Per step what the coach needs at request time: normalized action, description, url, failed."""
    return [
        {"norm": normalize_action(s.action), "desc": describe_action(s.action, s.thought), "url": s.url,
         "failed": s.failed, "reward": s.reward, "action": s.action[:200],
         **({"error": normalize_error(s.error)[:160]} if s.error else {})}
        for s in trajectory.steps
    ]


def _summary_prompt(trajectory: Trajectory, draft: str) -> str:
    lines = [f"{i + 1}. {s.action}" + (f" -> error: {s.error}" if s.error else "") for i, s in enumerate(trajectory.steps[:40])]
    return (
        "Summarize this web-agent run in 3-5 sentences: task, site, key actions, outcome, errors.\n"
        f"Draft summary: {draft}\nSteps:\n" + "\n".join(lines)
    )
