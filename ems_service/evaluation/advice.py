"""The advice section of the evaluation: what an agent would read, judged by checks independent of the coach.

Each check is written from the agent's side, not from the coach's templates: a message "shows internals"
when it carries a score, a feature's wording or the agent's identity; it is "grounded" when it names
something of the run itself (its site or a site it was on, a label it acted on, a page it was on) or a plan on
its own site;
it "carries another run's details" when it holds an element id, a coordinate, the host of a site that is neither
the task's nor one the run was on, or a value typed by a retrieved run that is not in the current task.
"""

from __future__ import annotations

import re
from collections import Counter
from urllib.parse import urlsplit

from coach import FEATURES, Guidance, Neighbour, PartialRun
from condenser import action_target, action_verb, domain_of, registrable_domain

_INTERNALS = re.compile(
    r"\b\d\.\d{2}\b|\b(?:risk|similarity|similar past runs mostly|feature|weight|logistic|threshold|probability"
    r"|this agent|other agents?|long,? constrained task|risk signals|confidence|episode \d+)\b", re.I)
_FEATURE_WORDS = re.compile(r"\b(?:" + "|".join(re.escape(f) for f in FEATURES) + r")\b")
_IDS = re.compile(r"\[\s*\d+\s*\]|\b(?:index|bid|idx|element_id)\s*[=:]\s*\d+|\(\s*\d+\s*,\s*\d+\s*\)"
                  r"|#[A-Za-z][\w-]*\d|\b(?:click|type|select)\s*\(\s*['\"]?\d+|\bclick\s+\d+\b", re.I)
_HOSTS = re.compile(r"\b(?:[a-z0-9-]+\.)+(?:com|org|net|gov|edu|io|co|uk|de|fr|example|info|us|ca|au|jp|app|dev)\b",
                    re.I)
_TYPED = re.compile(r"^\s*(?:type|fill|input_text|input|google_search|search|fill_search)\w*\s*[:\[(]\s*(?:\d+\s*,\s*)?"
                    r"['\"]?([^\]'\")]+)|text\s*=\s*['\"]([^'\"]+)", re.I)
_WALL_CHECKS = {
    "consent": (re.compile(r"consent|cookie", re.I), re.compile(r"cookie|consent", re.I)),
    "login": (re.compile(r"/(?:log-?in|sign-?in|signin|ap/signin)(?:[/?#.]|$)|please (?:log|sign) ?in", re.I),
              re.compile(r"sign in|log ?in|login", re.I)),
    "captcha": (re.compile(r"captcha|are you a robot|unusual traffic", re.I), re.compile(r"captcha|bot check", re.I)),
}


# a warning about the run's own loop: "you have clicked 'X' 3 times" (and the older "the same action repeated")
_LOOP_WORDS = re.compile(r"\d+ times|the same action repeated|a loop without progress", re.I)


def shows_internals(text: str) -> bool:
    return bool(_INTERNALS.search(text) or _FEATURE_WORDS.search(text))


def _own_fragments(run: PartialRun) -> set[str]:
    out = set()
    if run.domain:
        out |= {run.domain.lower(), (registrable_domain(run.domain) or "").lower()}
    for s in run.steps:
        target = action_target(s.action)
        if target and len(target) >= 3 and not target.isdigit():
            out.add(target.lower()[:30])
        if s.url:
            host = domain_of(s.url)
            if host:  # a site the run was on (the agent gone to google.com is told so)
                out.add((registrable_domain(host) or host).lower())
            path = urlsplit(s.url).path.strip("/")
            if len(path) >= 3:
                out.add("/" + path.lower()[:20])
    return {f for f in out if f}


def grounded(text: str, run: PartialRun) -> bool:
    """Names the run's own site, a label it acted on, a page it was on, or its own repeated action."""
    low = text.lower()
    if any(f in low for f in _own_fragments(run)):
        return True
    return bool(re.search(r"\byou have \w+ .{0,40}\b\d+ times\b|\byour last \d+ actions\b|\bthe last \d+ steps\b", low))


def foreign_details(text: str, run: PartialRun, neighbours: list[Neighbour], typed: dict[int, list[str]]) -> bool:
    """Carries an element id / coordinate, another site's host, or a value typed by a retrieved run only."""
    if _IDS.search(text):
        return True
    own = registrable_domain(run.domain) if run.domain else None
    visited = {own} | {registrable_domain(domain_of(s.url)) for s in run.steps if s.url and domain_of(s.url)}
    if any(registrable_domain(h.lower()) not in visited for h in _HOSTS.findall(text)):  # where the run went is its own
        return True
    low = text.lower()
    task = run.task.lower() + " " + " ".join(s.action.lower() for s in run.steps)
    own_name = (own or "").split(".")[0]
    for n in neighbours:
        for value in typed.get(n.id, []):
            v = value.lower().strip()
            # a lone short lower-case word ("men", "captcha") identifies nothing; names, dates and phrases do
            if len(v) < 3 or v == own_name or (value.islower() and " " not in v and len(v) <= 8 and not any(
                    c.isdigit() for c in v)):
                continue
            if re.search(rf"(?<!\w){re.escape(v)}(?!\w)", low) and v not in task:
                return True
    return False


def typed_values(actions: list[str]) -> list[str]:
    """Values typed or searched in a run (the answers and inputs that belong to it alone)."""
    out = []
    for a in actions:
        m = _TYPED.search(a)
        if m and action_verb(a) in {"type", "search"}:
            out.append((m.group(1) or m.group(2) or "").strip())
        elif action_verb(a) == "answer" and action_target(a):
            out.append(action_target(a))
    return [v for v in out if v]


def looping(run: PartialRun) -> bool:
    """The last three actions are identical, and are not scrolls (reading down a page is no loop)."""
    raw = [" ".join(s.action.lower().split()) for s in run.steps[-3:]]
    return len(raw) == 3 and len(set(raw)) == 1 and action_verb(run.steps[-1].action) not in {"scroll", "wait"}


def scrolling(run: PartialRun) -> bool:
    """The last three actions are the same scroll."""
    raw = [" ".join(s.action.lower().split()) for s in run.steps[-3:]]
    return len(raw) == 3 and len(set(raw)) == 1 and action_verb(run.steps[-1].action) == "scroll"


def wall_in_view(run: PartialRun) -> str | None:
    """A wall visible in the last step's URL, page text or error (independent patterns)."""
    last = run.steps[-1] if run.steps else None
    if last is None:
        return None
    # the address without its query: `?g-recaptcha-response=&phone=...` is a lookup form's results, not a captcha
    address = (last.url or "").split("?", 1)[0]
    blob = " ".join(filter(None, [address, (last.observation or "")[:3000], last.error]))
    for kind, (seen, _) in _WALL_CHECKS.items():
        if seen.search(blob):
            return kind
    return None


def wall_named(text: str, kind: str) -> bool:
    return bool(_WALL_CHECKS[kind][1].search(text))


def summarize_advice(records: list[dict]) -> dict:
    """Figures over the advice records of one scope (one per evaluated prefix)."""
    spoke = [r for r in records if r["intervene"]]
    texts = Counter(r["text"] for r in spoke)
    loops = [r for r in records if r["looping"] and r["success"] is not True]  # a success's "increment" x3 is no loop
    walls = [r for r in records if r["wall"]]
    scrolls = [r for r in records if r["scrolling"]]
    healthy = [r for r in records if r["success"] is True]
    n = len(spoke)
    return {
        "advice_prefixes": len(records),
        "advice_interventions": n,
        "advice_internals": round(sum(r["internals"] for r in spoke) / n, 4) if n else None,
        "advice_grounded": round(sum(r["grounded"] for r in spoke) / n, 4) if n else None,
        "advice_foreign": round(sum(r["foreign"] for r in spoke) / n, 4) if n else None,
        "advice_most_common": round(texts.most_common(1)[0][1] / n, 4) if n else None,
        "advice_distinct": len(texts),
        "advice_most_common_text": texts.most_common(1)[0][0] if n else None,
        "advice_with_action_or_error": round(sum(r["actionable"] for r in spoke) / n, 4) if n else None,
        "looping_runs": len(loops),
        "looping_warned": round(sum(r["intervene"] and r["repeat"] for r in loops) / len(loops), 4) if loops else None,
        "scroll_repeats": len(scrolls),
        "scroll_repeats_interrupted": round(sum(r["intervene"] for r in scrolls) / len(scrolls), 4) if scrolls else None,
        "walls_in_view": len(walls),
        "walls_named": round(sum(r["intervene"] and r["wall_named"] for r in walls) / len(walls), 4) if walls else None,
        "advice_healthy_interrupted": round(sum(r["intervene"] for r in healthy) / len(healthy), 4) if healthy else None,
        "flagged": {check: [r["text"] for r in spoke if r[check] is flag][:3]
                    for check, flag in (("internals", True), ("foreign", True), ("grounded", False))},
    }


def record(guidance: Guidance, run: PartialRun, neighbours: list[Neighbour], typed: dict[int, list[str]],
           success: bool | None) -> dict:
    """One evaluated prefix: the message the agent would read and the checks on it."""
    text = guidance.system_message.content if guidance.system_message else guidance.advice
    wall = wall_in_view(run)
    return {
        "intervene": guidance.intervene, "text": text, "success": success,
        "internals": shows_internals(text), "grounded": grounded(text, run),
        "foreign": foreign_details(text, run, neighbours, typed),
        "actionable": bool(guidance.suggested_action or guidance.error_to_avoid),
        "looping": looping(run), "scrolling": scrolling(run), "repeat": "repeat" in getattr(guidance, "signals", []) or bool(_LOOP_WORDS.search(text)),
        "wall": wall, "wall_named": bool(wall and wall_named(text, wall)),
        "domain": domain_of(run.start_url) or run.domain,
    }
