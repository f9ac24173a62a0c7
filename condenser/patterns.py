"""Action and error normalization, error patterns and rule-based failure categories."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from condenser.models import FailureCategory, Trajectory

MAX_ERROR_PATTERNS = 5

_VERBS = {
    "click": "click", "tap": "click", "press_button": "click", "dblclick": "click", "double_click": "click",
    "type": "type", "typed": "type", "filled": "type", "fill": "type", "input": "type", "input_text": "type",
    "send_keys": "type",
    "fill_form": "type", "fill_search": "search", "google_search": "search", "search": "search",
    "select": "select", "select_option": "select", "choose": "select",
    "scroll": "scroll", "scroll_down": "scroll", "scroll_up": "scroll",
    "goto": "navigate", "navigate": "navigate", "go_to_url": "navigate", "open": "navigate", "visit": "navigate",
    "go_back": "back", "back": "back", "go_forward": "forward",
    "press": "press", "keypress": "press", "key": "press", "enter": "press", "send_key": "press",
    "hover": "hover", "drag": "drag", "slider": "drag", "wait": "wait", "none": "none",
    "answer": "answer", "stop": "answer", "done": "answer", "finish": "answer", "send_msg_to_user": "answer",
}
_VERB_RE = re.compile(r"^\s*([A-Za-z_]+)")
_QUOTED_RE = re.compile(r"\"[^\"]*\"|'[^']*'")
_URL_RE = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
_HEX_RE = re.compile(r"\b(?:0x[0-9a-f]+|(?=[0-9a-f]*\d)[0-9a-f]{8,})\b", re.I)
_NUM_RE = re.compile(r"\d+(?:[.,]\d+)*")
_SPACE_RE = re.compile(r"\s+")
_COORDS_RE = re.compile(r"\(\s*-?\d+(?:\.\d+)?\s*,\s*-?\d+(?:\.\d+)?\s*\)")
_ELEMENT_ID_RE = re.compile(r"^\[?\s*[a-z]?\d+\s*\]?$", re.I)


@lru_cache(maxsize=65536)
def action_verb(action: str) -> str:
    """The canonical verb of an action string (`click`, `type`, `navigate`, ... or `other`)."""
    m = _VERB_RE.match(action)
    if not m:
        return "other"
    word = m.group(1).lower()
    return _VERBS.get(word, _VERBS.get(word.split("_")[0], "other"))


@lru_cache(maxsize=65536)
def action_target(action: str) -> str:
    """The human-readable target/text of an action, with element ids and coordinates dropped."""
    text = action.strip()
    m = _VERB_RE.match(text)
    rest = text[m.end():] if m else text
    rest = rest.lstrip(":").strip()
    rest = _COORDS_RE.sub(" ", rest)
    rest = re.sub(r"^(?:at|to|on)\b", " ", rest.strip(), flags=re.I)
    # click[82] / fill_search[35,foo]: a leading numeric element id is page-specific, keep only the text.
    bracket = re.match(r"^\[\s*([^\]]*)\]\s*(.*)$", rest, re.S)
    if bracket:
        inner, tail = bracket.group(1), bracket.group(2)
        parts = [p for p in inner.split(",", 1)]
        if len(parts) == 2 and _ELEMENT_ID_RE.match(parts[0].strip()):
            inner = parts[1]
        elif _ELEMENT_ID_RE.match(inner.strip()) or (tail.strip() and re.fullmatch(r"[a-z]+", inner.strip(), re.I)):
            inner = ""
        rest = f"{inner} {tail}"
    # TYPE: value [role] label -> value label
    rest = re.sub(r"\[(?:[a-z]+)\]", " ", rest)
    rest = re.sub(r"[\"'\[\]()]", " ", rest)
    if _ELEMENT_ID_RE.match(rest.strip()) and action_verb(action) not in {"type", "search", "press"}:
        rest = ""
    return _SPACE_RE.sub(" ", rest).strip().lower()


@lru_cache(maxsize=65536)
def normalize_action(action: str) -> str:
    """`verb target` in lower case: the unit the coach and the evaluation compare actions by."""
    verb, target = action_verb(action), action_target(action)
    if verb in {"scroll", "back", "forward", "wait", "none"}:
        return verb
    return f"{verb} {target}".strip()


def normalize_error(text: str) -> str:
    """Error text with urls, quoted strings, ids and numbers replaced by placeholders (of its head: the pattern is
    200 characters, and a page can make an error megabytes long)."""
    text = _URL_RE.sub("<url>", text[:2000].strip())
    text = _QUOTED_RE.sub("<str>", text)
    text = _HEX_RE.sub("<id>", text)
    text = _NUM_RE.sub("<n>", text)
    text = _SPACE_RE.sub(" ", text).strip().lower()
    return text[:200]


def error_patterns(trajectory: Trajectory) -> list[str]:
    """Up to five `verb: normalized error` patterns, most frequent first (ties by first seen)."""
    counts: Counter[str] = Counter()
    for step in trajectory.steps:
        if step.error and step.error.strip():
            counts[f"{action_verb(step.action)}: {normalize_error(step.error)}"] += 1
    return [p for p, _ in counts.most_common(MAX_ERROR_PATTERNS)]


_RULES: list[tuple[FailureCategory, re.Pattern[str]]] = [
    (FailureCategory.captcha_or_bot_wall, re.compile(
        r"captcha|recaptcha|hcaptcha|are you a robot|not a robot|bot detection|access denied|cloudflare"
        r"|unusual traffic|verify you are human|blocked", re.I)),
    (FailureCategory.login_wall, re.compile(
        r"log ?in required|sign ?in required|please (?:log|sign) ?in|login wall|must be logged|authenticat"
        r"|session expired|login page|sign in to continue", re.I)),
    (FailureCategory.consent_or_overlay, re.compile(
        r"cookie|consent|overlay|modal|popup|pop-up|intercepts pointer|obscured|another element would receive"
        r"|not clickable at point|dialog", re.I)),
    (FailureCategory.timeout, re.compile(r"timed? ?out|timeout|deadline exceeded", re.I)),
    (FailureCategory.navigation_error, re.compile(
        r"net::err|navigation|dns|err_name_not_resolved|connection refused|page crashed|target closed", re.I)),
    (FailureCategory.http_error, re.compile(r"\b(?:http|status)\s*(?:code\s*)?[45]\d\d\b|\b[45]\d\d (?:error|not found|forbidden)", re.I)),
    (FailureCategory.element_not_found, re.compile(
        r"no (?:such )?element|not found|could not find|unable to (?:find|locate)|no node|not visible"
        r"|not attached|does not exist|invalid (?:element|selector)|element id", re.I)),
]
_LIMIT_STATUS = re.compile(r"limit|max[_ ]?(?:turns|steps)|too many steps", re.I)
_TIMEOUT_STATUS = re.compile(r"time ?out", re.I)


def loop_detected(trajectory: Trajectory, *, window: int = 3) -> bool:
    """True when the same action (or the same action on the same url) repeats without reward progress."""
    steps = trajectory.steps
    best = float("-inf")
    seen: Counter[tuple[str, str | None]] = Counter()
    streak = 1
    raw = [" ".join(s.action.lower().split()) for s in steps]
    for i, step in enumerate(steps):
        key = (raw[i], step.url)
        progressed = step.reward is not None and step.reward > best
        if step.reward is not None:
            best = max(best, step.reward)
        if progressed:
            seen.clear()
        seen[key] += 1
        if i and raw[i] == raw[i - 1] and not progressed:
            streak += 1
        else:
            streak = 1
        if action_verb(step.action) not in {"scroll", "wait"} and (streak >= window or seen[key] >= window + 1):
            return True
    return False


def failure_categories(trajectory: Trajectory) -> list[FailureCategory]:
    """Failure categories of a run by rules over its errors, observations, status and shape."""
    found: list[FailureCategory] = []
    status = trajectory.outcome.status or ""
    if _LIMIT_STATUS.search(status):
        found.append(FailureCategory.step_limit)
    if _TIMEOUT_STATUS.search(status):
        found.append(FailureCategory.timeout)
    texts = [s.error for s in trajectory.steps if s.error]
    texts += [s.observation for s in trajectory.steps[-3:] if s.observation and trajectory.outcome.success is False]
    blob = "\n".join(t for t in texts if t)
    for category, pattern in _RULES:
        if blob and pattern.search(blob) and category not in found:
            found.append(category)
    if any(action_verb(s.action) == "none" for s in trajectory.steps) and FailureCategory.element_not_found not in found:
        found.append(FailureCategory.element_not_found)
    if trajectory.outcome.success is True:
        return found
    if loop_detected(trajectory):
        found.append(FailureCategory.loop)
    if trajectory.outcome.success is False:
        if not found and not any(s.error for s in trajectory.steps):
            found.append(FailureCategory.wrong_answer)
        elif not found:
            found.append(FailureCategory.other)
    return found


_LABEL_RES = [
    re.compile(r"(?:label(?:l)?ed|titled|named|text) (?:as )?['\"“]?([^'\"”\n]{2,60}?)['\"”]?(?: which| that| to (?:find|navigate|go|see|view|access|open|search|add|select|get|check|start)|\.|,|;|$)", re.I),
    # "navigate to the REI websites main page": a description in the agent's words, not a visible label (said as
    # "the ... page", never quoted as 'REI websites main' or 'top of the')
    re.compile(r"(?:lead|go|navigate|take me) to the ([^.,;\n]{3,50}?) (section|page|tab)", re.I),
    re.compile(r"(?:click(?:ing)? (?:on )?|select(?:ing)? |press(?:ing)? )(?:the )?['\"“]([^'\"”\n]{2,60})['\"”]", re.I),
    re.compile(r"['\"“]([^'\"”\n]{2,60})['\"”] (?:button|link|tab|option|menu|field|checkbox)", re.I),
    # "Clicking on the Popular Stories link with element_id [127]": a capitalised name before the control's kind
    re.compile(r"\bclick(?:ing|ed|s)? (?:on )?the ((?-i:[A-Z0-9$])[^.,;:\n\[\]]{0,48}?) (?:section )?"
               r"(?:button|link|tab|option|menu item|menu|icon|checkbox|dropdown)s? (?:with (?:the )?element|\[|\(element)", re.I),
]


def describe_action(action: str, thought: str | None = None) -> str:
    """A page-independent description of an action: verb + target text, never a bare element id.

    Element ids and coordinates only mean something on the page they came from, so when the action has no
    text of its own the label is taken from the agent's thought (e.g. "the link labeled Add all DLC to Cart").
    """
    verb, target = action_verb(action), action_target(action)
    if verb in {"scroll", "back", "forward", "wait", "none"}:
        return verb if verb != "none" else "no action (element not found)"
    if not target and thought:
        part = thought.split("Action description:", 1)[-1]
        for pattern in _LABEL_RES:
            m = pattern.search(part)
            if m:
                what = m.group(1).strip()
                target = f"the {what} {m.group(2)}" if pattern.groups == 2 else f"the element labeled '{what}'"
                break
    return f"{verb} {target}".strip() if target else f"{verb} (an element on the page)"
