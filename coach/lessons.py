"""A learned lesson in words an agent may read: rebuilt from its parts, never its stored text.

A lesson learned at ingest ("when click fails with '<error>', recover with: ...") comes from whatever run a writer
posted: its error is free text and its recovery names elements and hosts. Its stored text is the memory's key (it
deduplicates lessons), not something to quote: what an agent reads is the command word, the error's class from the
fixed vocabulary (`error_class`) and each recovery step through the same whitelist as the coach's plans (a visible
label, a named key, a navigation only within the reader's own site, a typed value never). A lesson with a step that
cannot be said is not said at all; the command comes from a fixed list and an element is named only by generic
control words (`GENERIC_UI`): a lesson reaches agents on every site.
"""

from __future__ import annotations

import re

from coach.pages import same_site, site
from coach.words import error_class, label

_LABELED = re.compile(r"^the element labeled '(?P<label>.*)'$")
# A lesson is served to agents on every site (tier 1 goes into system prompts), so it names only what any site
# has: the failed command from a fixed list, and an element only by generic control words ("the combobox", "the
# option", "Accept all"); a label of other words is a site's own, or a writer's, and is not said.
COMMANDS = {
    "click": "click", "dblclick": "double-click", "double_click": "double-click", "hover": "hover", "tap": "tap",
    "type": "type", "fill": "fill", "input": "type", "input_text": "type", "send_keys": "type", "select": "select",
    "select_option": "select option", "press": "press", "key": "press", "keypress": "press", "scroll": "scroll",
    "goto": "go to", "go_to": "go to", "navigate": "navigate", "search": "search", "google_search": "search",
    "fill_search": "search", "check": "check", "uncheck": "uncheck", "upload": "upload", "drag": "drag",
    "focus": "focus", "clear": "clear", "submit": "submit",
}
GENERIC_UI = frozenset(
    "the a an this that first last next previous combobox option options dropdown drop down list listbox menu field "
    "input box text textbox search searchbox button link icon tab checkbox radio toggle switch item result results "
    "filter filters sort apply ok okay close accept reject dismiss all cookies cookie continue done save submit go "
    "enter show more less open view expand collapse select choose date calendar time size quantity arrow up down "
    "left right x clear reset back home page popup pop-up dialog banner overlay modal field's element".split())
_KEYS = {"enter": "Enter", "return": "Enter", "escape": "Escape", "esc": "Escape", "tab": "Tab", "space": "Space"}
_WORDS = {"scroll": "scroll", "back": "go back", "forward": "go forward"}
_LABEL_VERBS = {"click": "click", "hover": "hover over", "select": "select", "check": "check", "dblclick": "double-click"}


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
        if not name or not all(w in GENERIC_UI for w in re.findall(r"[\w'-]+", name.lower())):
            return None
        return f"{_LABEL_VERBS[verb]} '{name}'"
    return None


def lesson_words(failed_command: str | None, error_pattern: str | None, recovery: list[str],
                 domain: str | None = None) -> str | None:
    """"When click fails with a disabled element, recover with: press Escape, then click 'Continue'." for the run on
    `domain` (None: no site, so no navigation can be said); None when any part cannot be said."""
    command = COMMANDS.get(failed_command or "")
    if command is None or not recovery:
        return None
    steps = [recovery_step(s, domain) for s in recovery[:3]]
    if not all(steps):
        return None
    cls = error_class(error_pattern) if error_pattern else None
    when = f"When {command} fails" + (f" with {cls}" if cls else "")
    return f"{when}, recover with: " + ", then ".join(s for s in steps if s) + "."
