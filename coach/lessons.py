"""A learned lesson in words an agent may read: rebuilt from its parts, never its stored text.

A lesson learned at ingest ("when click fails with '<error>', recover with: ...") comes from whatever run a writer
posted: its error is free text and its recovery names elements and hosts. Its stored text is the memory's key (it
deduplicates lessons), not something to quote: what an agent reads is the command word, the error's class from the
fixed vocabulary (`error_class`) and each recovery step through the same whitelist as the coach's plans (a visible
label, a named key, a navigation only within the reader's own site, a typed value never). A lesson with a step that
cannot be said is not said at all.
"""

from __future__ import annotations

import re

from coach.words import error_class, label, same_site, site

_LABELED = re.compile(r"^the element labeled '(?P<label>.*)'$")
_KEYS = {"enter": "Enter", "return": "Enter", "escape": "Escape", "esc": "Escape", "tab": "Tab", "space": "Space"}
_WORDS = {"scroll": "scroll", "back": "go back", "forward": "go forward"}
_LABEL_VERBS = {"click": "click", "hover": "hover over", "select": "select", "check": "check", "dblclick": "double-click"}
_COMMAND = re.compile(r"[a-z_]{1,32}")


def recovery_step(step: str, domain: str | None) -> str | None:
    """One recovery step of a learned lesson ("click add to cart", "type <text>", "navigate to shop.com") in the
    agent's words, or None when it cannot be said safely."""
    verb, _, rest = step.strip().partition(" ")
    rest = rest.strip()
    if verb in _WORDS and not rest:
        return _WORDS[verb]
    if verb in {"type", "search"}:
        return "type the text your task gives" if verb == "type" else "search for what your task asks"
    if verb == "press":
        key = _KEYS.get(rest.lower())
        return f"press {key}" if key else None
    if verb == "navigate":
        host = rest.removeprefix("to ").strip()
        return f"go to {site(domain)}" if domain and site(domain) and host != "<url>" and same_site(host, domain) \
            else None
    if verb in _LABEL_VERBS:
        m = _LABELED.match(rest)
        name = label(m.group("label") if m else rest)
        return f"{_LABEL_VERBS[verb]} '{name}'" if name else None
    return None


def lesson_words(failed_command: str | None, error_pattern: str | None, recovery: list[str],
                 domain: str | None = None) -> str | None:
    """"When click fails with a disabled element, recover with: press Escape, then click 'Continue'." for the run on
    `domain` (None: no site, so no navigation can be said); None when any part cannot be said."""
    if not failed_command or not _COMMAND.fullmatch(failed_command) or not recovery:
        return None
    steps = [recovery_step(s, domain) for s in recovery[:3]]
    if not all(steps):
        return None
    cls = error_class(error_pattern) if error_pattern else None
    when = f"When {failed_command.replace('_', ' ')} fails" + (f" with {cls}" if cls else "")
    return f"{when}, recover with: " + ", then ".join(s for s in steps if s) + "."
