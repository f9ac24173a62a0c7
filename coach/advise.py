"""advise(): partial run + similar episodes -> Guidance (silence is the default)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel, ValidationError

from coach.evidence import evidence
from coach.features import run_features
from coach.models import Guidance, Neighbour, PartialRun, Reason, Signal, SystemMessage
from coach.pages import disguised_hosts, hosts_in, same_site, site
from coach.plan import FailurePoint, Plan, failure_point, success_plan
from coach.risk import RiskModel, describe_reasons
from coach.runstate import run_signals
from coach.safety import sanitize
from coach.walls import dead_end
from coach.words import (
    carries_ids,
    clean,
    odd_letters,
    orders_reader,
    role_marker,
    scripts_of,
    shows_internals,
    spells_instruction,
    steering_allowed,
    steers_somewhere,
)

logger = logging.getLogger(__name__)

LLM = Callable[[list[dict[str, str]]], str]


@dataclass(frozen=True)
class CoachConfig:
    """Thresholds of the decision (the service fills them from Settings)."""

    high_risk: float = 0.65
    moderate_risk: float = 0.40
    min_similarity: float = 0.55
    cooldown_steps: int = 3
    evidence_limit: int = 5


class LLMAdvice(BaseModel):
    """What an LLM must return; anything else falls back to the evidence-built advice."""

    advice: str
    suggested_action: str | None = None
    rationale: str | None = None
    error_to_avoid: str | None = None


def render_system_message(guidance: Guidance) -> SystemMessage:
    """The system message: the coach's own words only (no scores, no quoted text from other runs)."""
    own, memory = guidance._heard
    runs = "earlier runs on the task's site" if guidance._away else "earlier runs on this site"
    source = f"from what it shows and from {runs}" if own and memory else "from what it shows" if own else f"from {runs}"
    lines = [f"Coaching for this run ({source}):", guidance.advice]
    said = len(guidance.plan) <= 1 and f": {guidance.suggested_action}." in guidance.advice  # "went on to: X."
    action = (guidance.suggested_action or "").casefold()
    # "Open resy.com (navigate to its address) ..." then "Try next: open resy.com.": said once; a plan of several
    # steps keeps its first step's line ("went on to: X, then Y" names it among others)
    said = said or bool(action) and action in guidance.advice.casefold() and f"went on to: {action}, then" not in \
        guidance.advice.casefold()
    if guidance.suggested_action and not said:  # a one-step plan says its step once
        lines.append(f"Try next: {guidance.suggested_action}.")
    if guidance.error_to_avoid and not guidance._error_said:  # "Avoid: repeating click 'News'" after the repeat
        lines.append(f"Avoid: {guidance.error_to_avoid}.")
    return SystemMessage(role="system", content="\n".join(lines)[:2000])


_SHORTENED_STOP = re.compile(r"…\.")
# a plan step that only confirms or dismisses: alone, it names nothing of the task
_CONFIRMING = re.compile(r"(?i)close the pop-up if one shows \(.*\)|click '(?:done|apply|ok|okay|view results|show results"
                         r"|see results|show … \w+|submit|continue|next|confirm|save|go|update|close|yes|accept|got it)'")


def advice_key(guidance: Guidance) -> str:
    """What counts as "the same advice" for the cooldown."""
    if guidance.signals:  # the run's own state: the same finding is the same advice, whatever the plan says
        return "|".join([",".join(guidance.signals), guidance.error_to_avoid or ""])
    return "|".join(["", guidance.suggested_action or "", guidance.error_to_avoid or ""])


def _plan_sentence(plan: Plan, domain: str | None, sent_there: bool = False) -> str:
    """The plan in words. `sent_there`: a signal already sends the agent to the task's site ("go back to yelp.com"),
    so the plan's own first step there is not said twice."""
    who = ("a successful run of the same task" if plan.same_task else "a successful run of a task like yours"
           if plan.same_template else "a similar successful run")
    steps = plan.steps
    if plan.away and sent_there and steps and steps[0].startswith(("open ", "go back to ")):
        steps = steps[1:]
        if not steps:
            return ""
        body = steps[0] if len(steps) == 1 else ", then ".join(steps)
        return f"There, {who} went on to: {body}."
    body = steps[0] if len(steps) == 1 else ", then ".join(steps)
    if plan.away:
        return (f"You are on {plan.away}, but {who} did it on {site(domain)}: {body}.")
    return f"On {plan.site or site(domain) or 'this site'}, {who} went on to: {body}."


def _without_repeated_step(plan: Plan | None, signals: list[Signal]) -> Plan | None:
    """The plan without the step the agent is repeating to no effect: "You have clicked 'News' 3 times ... pick a
    different element" and then "Try next: click 'News'" would contradict each other."""
    repeat = next((s for s in signals if s.kind == "repeat" and s.facts.get("target")), None)
    if plan is None or repeat is None:
        return plan
    said = f"{repeat.facts.get('action')} '{repeat.facts['target']}'".casefold()
    keep = [i for i, step in enumerate(plan.steps) if step.casefold() != said]
    if not keep:
        return None
    if len(keep) == len(plan.steps):
        return plan
    return replace(plan, steps=[plan.steps[i] for i in keep], norms=[plan.norms[i] for i in keep])


def advise(
    run: PartialRun,
    neighbours: list[Neighbour],
    *,
    risk_model: RiskModel | None = None,
    config: CoachConfig | None = None,
    llm: LLM | None = None,
    recent_advice: list[tuple[int, str]] | None = None,
    lessons: list[str] | None = None,
    features: dict[str, float] | None = None,
) -> Guidance:
    """Score the run's failure risk against similar episodes and decide whether to speak, and what to say.

    Two audiences: `advice`, `suggested_action`, `error_to_avoid` and `system_message` are for the agent and
    hold only the coach's words plus whitelisted fragments (coach.words); `rationale` and `reasons` are for
    developers. What the run itself shows (run_signals) is said even when no episode is similar enough.
    `recent_advice` holds (step index, advice key) pairs already given in this session (cooldown);
    `features` may be passed when the caller computed them already (see `run_features`). `lessons` (stored
    text) are reported in the rationale only, never in the agent's words.
    """
    config = config or CoachConfig()
    model = risk_model or RiskModel()
    if features is None:
        features = run_features(run, neighbours, min_similarity=config.min_similarity)
    risk, reasons = model.score(features)
    close = [n for n in neighbours if n.similarity >= config.min_similarity]
    best_sim = max((n.similarity for n in neighbours), default=0.0)
    failures = [n for n in close if n.success is False]
    signals = run_signals(run)
    plan = success_plan(run, neighbours, min_similarity=config.min_similarity)
    failed_at = failure_point(run, neighbours, min_similarity=config.min_similarity)
    categories = sorted({c for n in failures for c in n.failure_categories},
                        key=lambda c: (-sum(c in n.failure_categories for n in failures), c))[:3]
    for s in signals:  # what the run shows names its own categories first
        cat = {"repeat": "loop", "wall:consent": "consent_or_overlay", "wall:login": "login_wall",
               "wall:captcha": "captcha_or_bot_wall"}.get(s.kind)
        if cat and cat not in categories:
            categories.insert(0, cat)

    enough_evidence = best_sim >= config.min_similarity
    threshold = max(model.threshold, config.moderate_risk) if model.threshold is not None else config.high_risk
    strong = [s for s in signals if s.confidence >= RUN_SIGNAL_MIN]
    # memory speaks only with something specific: a plan that names more than a confirming click (a lone "click
    # 'DONE'" or "close the pop-up" says nothing of where the run stands: graders read it as an interruption with no
    # reason), or the step where a similar run went wrong
    planned = plan is not None and not (len(plan.steps) == 1 and _CONFIRMING.fullmatch(plan.steps[0]))
    memory_words = planned or (failed_at is not None and failed_at.specific)
    speak = bool(strong) or (bool(signals) and risk >= config.moderate_risk) or (
        enough_evidence and memory_words and (
            risk >= threshold or (model.threshold is None and risk >= config.moderate_risk and planned)))

    # the agent believes it is done: no more steps to take (unless it is away from the task's site: then the done
    # signal says where to go and check)
    finished = any(s.kind == "done" and not s.facts.get("away") for s in signals)
    if plan is not None and (finished or dead_end(run, signals, plan.url)):
        plan = None  # another run's next steps do not apply on a wall or a tab that shows no page of the site
    plan = _without_repeated_step(plan, signals)
    parts = [s.message for s in signals[:2] if s.message]  # a signal said inside another's words has none of its own
    own_said = len(parts)
    if plan is not None:
        sent_there = any(s.kind == "away" and not s.facts.get("linked") or s.kind == "done" and s.facts.get("away")
                         for s in signals[:2])
        if sentence := _plan_sentence(plan, run.domain, sent_there):
            parts.append(sentence)
    # how another run ended, in general words, only where nothing more specific is said (one remedy a message):
    # "use the site's search rather than browsing menus" beside a plan of filters, or a wall, contradicts them
    general = failed_at is not None and not failed_at.specific and (plan is not None or bool(signals))
    # a wall, a tab with no page or another site: what the run shows is the remedy; "use the site's search" after
    # "report that the site blocks automated access" takes it back
    blocked = dead_end(run, signals) or any(s.kind == "away" for s in signals)
    if (failed_at is not None and not finished and not general and not blocked
            and (not signals or risk >= config.moderate_risk)):
        parts.append(failed_at.words)
    lesson = _usable_lesson(lessons or [], run)
    if lesson:
        parts.append(f"A lesson for this error: {lesson}")
    heard = (bool(signals), len(parts) > own_said)
    speak = speak and bool(parts)  # a plan dropped at a dead end leaves nothing to say: no "carry on" interruption
    advice = " ".join(parts) or "Nothing in this run or in earlier runs on this site calls for a change; carry on."
    advice = _SHORTENED_STOP.sub("…", advice)  # a shortened page ends a sentence: "at /video/…." reads "…"
    error = None
    top = next((s for s in signals if s.kind in {"repeat", "errors"} or s.kind == "stall" and s.facts.get("error")),
               None)  # a wall first still has its repeat
    shown = signals[:2]  # the findings the advice says in full
    away = next((s for s in shown if s.kind == "away"), None)
    if away is not None and away.facts.get("linked"):
        away = None  # the site's own link: whether to go back is the agent's to tell (its message says how)
    if finished:
        error = "acting on the page after your own notes say the task is complete"
    elif away is not None:
        error = f"acting on other sites than {away.facts['site']}"
    elif top is not None and top.kind == "repeat" and top.facts.get("action") == "none":
        error = "planning actions on elements that the page does not show"
    elif top is not None and top.kind == "repeat":
        what = f"{top.facts.get('action')} '{top.facts['target']}'" if top.facts.get("target") else "the same action"
        error = f"repeating {what}" + (f", which led to {top.facts['error']}" if top.facts.get("error") else
                                       " without a change on the page")
    elif top is not None:  # failed steps: on their own, or counted by a stall
        error = f"retrying the failed action unchanged (it hit {top.facts['error']})"
    confidence = 0.0
    if close:
        sims = sorted((n.similarity for n in close), reverse=True)[:3]
        confidence = min(1.0, sum(sims) / len(sims)) * min(1.0, len(close) / 3)
    if signals:
        confidence = max(confidence, signals[0].confidence)
    guidance = Guidance(
        intervene=speak,
        failure_risk=round(risk, 4),
        confidence=round(confidence, 4),
        advice=advice[:900],
        suggested_action=plan.steps[0] if plan else away.facts["step"] if away else None,
        rationale=_rationale(risk, model, threshold, reasons, features, close, failures, best_sim, signals, plan,
                             failed_at, lessons),
        error_to_avoid=error,
        failure_categories=categories[:3],
        evidence=evidence(neighbours, config.evidence_limit),
        system_message=None,
        reasons=[Reason(**r) for r in model.reasons(features)],
        signals=[s.kind for s in signals],
        plan=plan.steps if plan else [],
    )
    guidance._heard = heard if any(heard) else (True, True)
    guidance._suggested_norm = plan.norms[0] if plan else None
    guidance._away = bool(plan and plan.away)
    guidance._error_said = error is not None and (finished or away is not None or top in shown)
    if speak and recent_advice:
        key = advice_key(guidance)
        t = len(run.steps)
        if any(k == key and t - step < config.cooldown_steps for step, k in recent_advice):
            guidance.intervene = False
    if guidance.intervene and llm is not None:
        _apply_llm(guidance, run, llm, signals, plan, failed_at)
    if guidance.intervene:
        guidance.system_message = render_system_message(guidance)
    return guidance


def _usable_lesson(lessons: list[str], run: PartialRun) -> str | None:
    """The first recalled lesson fit for the agent: recall serves seed and approved lessons only (a writer's
    hand-added lesson waits for a verifier), and its words still pass the agent rules."""
    for text in lessons[:3]:
        t = clean(text)[:240]
        if (t and sanitize(t, 240) == t and check_agent_words(t, run=run, allowed=t) is None and not orders_reader(t)
                and not steers_somewhere(t)):
            return t if t.endswith((".", "!", "?")) else t + "."
    return None


RUN_SIGNAL_MIN = 0.6  # a run signal this sure is said whatever the risk model and the memory say


def _rationale(risk: float, model: RiskModel, threshold: float, reasons: list[tuple[str, float]],
               features: dict[str, float], close: list[Neighbour], failures: list[Neighbour], best_sim: float,
               signals: list[Signal], plan: Plan | None, failed_at: FailurePoint | None,
               lessons: list[str] | None) -> str:
    parts = [f"risk {risk:.2f} ({model.kind} model, intervention threshold {threshold:.2f})"]
    if reasons:
        parts.append("raised by " + describe_reasons(reasons, features))
    parts.append(f"{len(close)} similar episodes (best similarity {best_sim:.2f}), {len(failures)} failed")
    if signals:
        parts.append("run signals: " + ", ".join(f"{s.kind} {s.confidence:.2f}" for s in signals))
    if plan:
        parts.append(f"plan from episode {plan.episode_id}" + (" (same template)" if plan.same_template else ""))
    if failed_at:
        parts.append(f"failure point from episode {failed_at.episode_id}")
    if lessons:
        parts.append(f"{len(lessons)} lessons recalled")
    return sanitize("; ".join(parts), 600)


def _llm_messages(guidance: Guidance, run: PartialRun, facts: dict[str, Any]) -> list[dict[str, str]]:
    """The grounded facts, and nothing else: the LLM may only phrase them."""
    return [
        {"role": "system", "content": (
            "You phrase coaching for a web agent. Use only the facts given: do not add element ids, indices, "
            "coordinates, web addresses, values or answers that are not in them. Write short imperative sentences "
            "to the agent about its own run; never mention scores, risk, similarity, models or other agents. Reply "
            "with one JSON object only: {\"advice\": str, \"suggested_action\": str|null, \"error_to_avoid\": "
            "str|null}.")},
        {"role": "user", "content": json.dumps(facts, ensure_ascii=False)},
    ]


def _facts(guidance: Guidance, run: PartialRun, signals: list[Signal], plan: Plan | None,
           failed_at: FailurePoint | None) -> dict[str, Any]:
    return {
        "task": sanitize(run.task, 300),
        "site": site(run.domain),
        "what_the_run_shows": [s.message for s in signals[:3]],
        "plan_from_a_success_on_this_site": plan.steps if plan else [],
        "where_similar_runs_went_wrong": failed_at.words if failed_at else None,
        "draft_advice": guidance.advice,
        "draft_suggested_action": guidance.suggested_action,
        "draft_error_to_avoid": guidance.error_to_avoid,
    }


_PARAMS = re.compile(r"\"[^\"]{1,80}\"|'[^']{1,80}'|“[^”]{1,80}”|\b\d[\d,.:/-]*\b")


def check_agent_words(text: str, *, run: PartialRun, allowed: str) -> str | None:
    """Why `text` may not be shown to the agent (None when it may): the rules every agent-facing text meets.

    No element ids, indices or coordinates; no host other than the run's own site; no quoted value or number
    that is neither in the task, the run's own steps nor the facts (`allowed`); no role markup or
    instruction-like phrasing; no scores or model internals.
    """
    t = clean(text)
    if carries_ids(t):
        return "element ids or coordinates"
    if any(not same_site(h, run.domain) for h in hosts_in(t) | disguised_hosts(t)):
        return "another site"
    if sanitize(t, 10_000) != t or spells_instruction(t) or role_marker(t) or odd_letters(t) or re.search(
            r"\b(?:inst|sys|developer|system)\b", t, re.I):
        return "role markup or instructions"
    if not scripts_of(t) <= (scripts_of(clean(run.task)) or {"LATIN"}):
        return "another script than the task's"
    if shows_internals(t):
        return "model internals"
    if not steering_allowed(t, clean(allowed)):  # the facts' own words may end the run; nothing else may
        return "words that steer (a secret, a contact, another store, the end of the task)"
    pool = " ".join([clean(run.task), clean(allowed)] + [clean(st.action) for st in run.steps]).lower()
    for m in _PARAMS.finditer(t):
        value = m.group(0).strip("\"'“”").lower()
        if value and value not in pool and not (value.isdigit() and int(value) <= 20):
            return "a value that is not in the task or the facts"
    return None


def parse_llm_json(text: str) -> LLMAdvice:
    """The first JSON object in `text`, validated; raises ValueError otherwise."""
    match = re.search(r"\{.*\}", text, re.S)
    if not match:
        raise ValueError("no JSON object in the LLM reply")
    try:
        return LLMAdvice.model_validate(json.loads(match.group(0)))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ValueError(f"LLM reply does not match the schema: {type(exc).__name__}") from exc


def _apply_llm(guidance: Guidance, run: PartialRun, llm: LLM, signals: list[Signal], plan: Plan | None,
               failed_at: FailurePoint | None) -> None:
    facts = _facts(guidance, run, signals, plan, failed_at)
    try:
        reply = parse_llm_json(llm(_llm_messages(guidance, run, facts)))
        allowed = json.dumps(facts, ensure_ascii=False)
        for text in (reply.advice, reply.suggested_action, reply.error_to_avoid):
            problem = check_agent_words(text or "", run=run, allowed=allowed)
            if problem:
                raise ValueError(f"LLM advice rejected: {problem}")
    except Exception as exc:  # noqa: BLE001 - invalid, late, failed or unsafe output: keep the template words
        guidance._source = f"fallback:{type(exc).__name__}"
        logger.info("LLM guidance fell back to the template: %s", type(exc).__name__)
        return
    guidance.advice = clean(reply.advice)[:900]
    guidance._error_said = False  # the LLM's words: its error_to_avoid is shown as it gave it
    if reply.suggested_action:
        guidance.suggested_action = clean(reply.suggested_action)[:200]
    if reply.error_to_avoid:
        guidance.error_to_avoid = clean(reply.error_to_avoid)[:200]
    guidance._source = "llm"
