"""Deterministic summaries and the text that is embedded for an episode or a partial run."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from condenser.models import FailureCategory, Trajectory
from condenser.patterns import action_verb, normalize_action
from condenser.typed_values import typed_value

MAX_EMBED_ACTIONS = 12
_VERB = re.compile(r"\s*[A-Za-z_.]+")  # "TYPE", "page.fill", "input_text"
_CHOICE_CALL = re.compile(r"(?i)(?:^|[\s.])(?:select_option|select_options|select|choose|pick)\s*\((?P<args>[^()]*)\)")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
_ID_SEGMENT = re.compile(r"^(?=.*\d)[A-Za-z0-9_\-]{4,}$|^\d+$")


def url_pattern(url: str | None) -> str | None:
    """`host/path` with id-like path segments replaced by `*` (/dp/B07XYZ123 -> /dp/*)."""
    if not url:
        return None
    parts = urlsplit(url if "://" in url else "http://" + url)
    host = (parts.hostname or "").lower()
    host = host[4:] if host.startswith("www.") else host
    segments = ["*" if _ID_SEGMENT.match(seg) else seg.lower() for seg in parts.path.split("/") if seg]
    return host + ("/" + "/".join(segments) if segments else "/")


def _shorten(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def key_actions(actions: list[str], limit: int = 5) -> list[str]:
    """A few representative actions: the first ones, then the last, skipping repeats and no-ops."""
    picked: list[str] = []
    seen: set[str] = set()
    for action in actions:
        norm = normalize_action(action)
        if action_verb(action) in {"scroll", "none", "wait"} or norm in seen:
            continue
        seen.add(norm)
        picked.append(action)
    if len(picked) <= limit:
        return picked
    return picked[: limit - 2] + picked[-2:]


TYPED_VALUE = "[typed value]"
_TYPING = frozenset({"type", "search", "select"})


def typed_masked(action: str) -> str:
    """`action` with the value it types shown as [typed value] (`condenser.typed_values`, every shape agents write
    actions in): a summary is read by other agents (the coach's evidence, search results), and a name, a user name
    or a local number typed into a form is no secret redaction can tell from a word. A typing action whose value
    cannot be told apart keeps its verb only."""
    span = typed_value(action)
    if span is not None:
        start, end, _ = span
        return action[:start] + TYPED_VALUE + action[end:]
    chosen = _CHOICE_CALL.search(action)  # page.select_option('#dob', '1985-03-02'): the option chosen
    if chosen is not None and (quoted := list(_QUOTED.finditer(action, chosen.start("args"), chosen.end("args")))):
        last = quoted[-1]
        return action[:last.start() + 1] + TYPED_VALUE + action[last.end() - 1:]
    if action_verb(action) not in _TYPING:
        return action
    verb = _VERB.match(action)
    return f"{verb.group(0).strip()} {TYPED_VALUE}" if verb else TYPED_VALUE


def summarize(trajectory: Trajectory, categories: list[FailureCategory], patterns: list[str]) -> str:
    """A 3-5 sentence summary naming the task, site, key actions, outcome and errors."""
    site = trajectory.domain or "an unknown site"
    n = len(trajectory.steps)
    task = re.sub(r"[.!?]+(\s+|$)", "; ", _shorten(trajectory.task, 200)).strip("; ")
    sentences = [f"Task: {task}.", f"The agent worked on {site} for {n} step{'s' if n != 1 else ''}."]
    keys = key_actions(trajectory.actions)
    if keys:
        sentences.append("Key actions: " + "; ".join(_shorten(typed_masked(a), 60) for a in keys) + ".")
    success = trajectory.outcome.success
    status = f" (status {trajectory.outcome.status})" if trajectory.outcome.status else ""
    verdict = {True: "succeeded", False: "failed", None: "ended with an unknown outcome"}[success]
    sentences.append(f"The run {verdict}{status}, per {trajectory.outcome.label_source.replace('_', ' ')}.")
    problems = [c.value.replace("_", " ") for c in categories] + [_shorten(p, 80) for p in patterns[:2]]
    if problems:
        sentences.append("Problems: " + "; ".join(problems) + ".")
    return " ".join(sentences)


def embed_text(task: str, domain: str | None, actions: list[str]) -> str:
    """The text embedded for retrieval: task, site and the normalized opening actions.

    Episodes and partial-run queries use this same function so that both land in one space.
    """
    steps: list[str] = []
    for action in actions:
        norm = normalize_action(action)
        if norm not in {"scroll", "none", "wait"} and (not steps or steps[-1] != norm):
            steps.append(_shorten(norm, 60))
        if len(steps) >= MAX_EMBED_ACTIONS:
            break
    text = f"{_shorten(task, 400)}\nsite: {domain or 'unknown'}"
    if steps:
        text += "\nsteps: " + "; ".join(steps)
    return text
