"""Where an action types a value, in the shapes agents write actions in: a typing call (`fill("#pw", "x")`,
`input_text(index=7, text="x")`, `page.locator(...).fill(x)`, `sendKeys`, `xdotool type`), any call with a named
value argument (`computer(action="type", text="x")`), WebArena's and Mind2Web's forms (`type [7] [x] [1]`,
`[textbox] Password -> TYPE: x`), an assignment (`el.value = "x"`) and a JSON action. Each finder is bounded on
hostile input (no pattern here backtracks more than linearly; JSON is read only to a fixed depth).
"""

from __future__ import annotations

import json
import re
from typing import Any

from condenser.scan import nocase

_TYPING_VERBS = (r"type|fill|input|input_text|send_keys|type_text|enter_text|set_value|fill_form|fill_field"
                 r"|fill_search|press_sequentially|insert_text|write|type_into|browser_type|sendkeys|inserttext"
                 r"|presssequentially|setvalue|fill_in|typetext|typewrite|type_keys|typekeys|send_text|sendtext")
_CALL = re.compile(r"(?:^|[\s.;])(?:" + nocase(_TYPING_VERBS) + r")\s*\((?P<args>.*)\)\s*;?\s*$", re.S)  # as _call()
# any other call (computer(action="type", text="x"), act(...)): typed only through a named value argument
_ANY_CALL = re.compile(r"(?:^|[\s.;])[A-Za-z_][\w]*\s*\((?P<args>.*)\)\s*;?\s*$", re.S)
# A name starts at a word start: tried inside a word, `\w+` ran to the word's end from every position (quadratic on a
# long word: 20k characters took seconds).
_LITERAL = re.compile(r"(?:(?<!\w)(?P<name>\w+)\s*[=:]\s*)?(?P<lit>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'"
                      r"|`(?:[^`\\$]|\\.)*`)", re.S)  # a JavaScript template literal without ${} too
_VALUE_ARGS = {"text", "value", "keys", "content", "input", "string", "data", "password", "secret", "query"}
_FORMS = [
    re.compile(r"(?i)^\s*type\s*\"(?P<val>.*)\"\s*$", re.S),  # Type "x"
    # TYPE: x [textbox] Password. The value holds no "[" and ends in a non-space (as the shortest value always did):
    # `.*?` tried the target at every place of a run of spaces or brackets, and each try ran to the run's end.
    re.compile(r"(?i)^\s*type:\s*(?P<val>(?:[^\[]*?\S)??)(?P<tgt>\s*\[[^\]]*\].*)$", re.S),
    # type [7] [x] [1] (WebArena: the last bracket says whether Enter follows): the value is the middle bracket
    re.compile(r"(?i)^\s*(?:" + _TYPING_VERBS + r")\s*\[(?P<tgt>[^\]]*)\]\s*\[(?P<val>[^\]]*)\]\s*\[[01]\]\s*$"),
    re.compile(r"(?i)^\s*(?:" + _TYPING_VERBS + r")\s*\[(?P<tgt>[^\]]*)\]\s*\[(?P<val>.*)\]\s*$", re.S),  # type[7][x]
    re.compile(r"(?i)^\s*(?:" + _TYPING_VERBS + r")\s*\[(?P<tgt>[^\],]*),\s*(?P<val>.*)\]\s*$", re.S),  # fill[7,x]
    # type [7] x: an element, then the value unbracketed
    re.compile(r"(?i)^\s*(?:" + _TYPING_VERBS + r")\s*\[(?P<tgt>[^\]]*)\]\s+(?P<val>[^\s\[](?:.*\S)?)\s*$", re.S),
    # xdotool type 'x' (el.value = "x" and a JSON action are read by _assigned and _json_typed)
    re.compile(r"(?i)^\s*xdotool\s+type\s+(?:--?\w+(?:[ =][^\s\"'-]\S*)?\s+)*+(?P<q>[\"'])(?P<val>[^\"']*)(?P=q)\s*$", re.S),
    re.compile(r"(?i)^\s*xdotool\s+type\s+(?:--?\w+(?:[ =][^\s\"'-]\S*)?\s+)*+(?P<val>[^\s\"'-]\S*)\s*$"),  # unquoted
    # Mind2Web's action_reprs: "[textbox]  Password -> TYPE: x"
    re.compile(r"(?i)^\s*(?P<tgt>\[[^\]]*\][^\n]*?)\s*->\s*type:\s*(?P<val>\S(?:.*\S)?)\s*$", re.S),
    # natural language: "Type x into the password field", "Enter x in the PIN box"
    re.compile(r"(?i)^\s*(?:type|enter|input|fill in|put|write)\s+[\"'`]?(?P<val>[^\s\"'`](?:[^\n\"'`]{0,126}[^\s\"'`])??)[\"'`]?"
               r"\s+(?:into|in|as)\s+(?P<tgt>(?:the\s+|a\s+|my\s+|your\s+)?[\w' -]{1,40}?(?:field|box|input|textbox|prompt))"
               r"\s*\.?\s*$"),
    # type x. A value of spaces types nothing; its end is a non-space (trailing spaces run to the end once).
    re.compile(r"(?i)^\s*type(?=\s*+\S)\s+(?P<val>(?![\[(]).*?\S)\s*$", re.S),
]


def _call(action: str) -> tuple[re.Match[str], bool] | None:
    """(`_CALL.search(action)`, True), else (`_ANY_CALL`'s match, False), in linear time: without the closing ")"
    no call matches, and every typing verb would have been tried to the end of the text."""
    if "(" not in action or not action.rstrip().rstrip(";").rstrip().endswith(")"):  # a statement's ";" too
        return None
    m = _CALL.search(action)
    if m:
        return m, True
    m = _ANY_CALL.search(action)
    return (m, False) if m else None


def _literals(text: str, start: int, end: int) -> list[re.Match[str]]:
    """`_LITERAL.finditer(text, start, end)` in linear time.

    A quote that nothing closes was tried as a literal's start, and each try ran to the end: quadratic on
    `type(\\"\\"\\"...)`. After the first such quote every later one of its kind is escaped in its reading, so
    none of them can start a literal or close one that starts before it: they are masked (a character that is no
    quote, no backslash and no word character, which the pattern otherwise reads as it read the quote), so the
    offsets stay.
    """
    if end - start < 256:
        return list(_LITERAL.finditer(text, start, end))
    masked = list(text)
    for quote in "\"'`":
        closes = [False] * (end + 2)  # closes[i]: a literal of this quote opened just before i would close
        for i in range(end - 1, start - 1, -1):
            c = text[i]
            closes[i] = True if c == quote else (i + 1 < end and closes[i + 2]) if c == "\\" else closes[i + 1]
        first = next((i for i in range(start, end) if text[i] == quote and not closes[i + 1]), end)
        for i in range(first + 1, end):
            if text[i] == quote:
                masked[i] = "\x00"
    return list(_LITERAL.finditer("".join(masked), start, end))


def typed_value(action: str) -> tuple[int, int, str] | None:
    """(start, end, target) of the value an action types, or None when it types nothing."""
    found = _call(action)
    if found:
        m, typing = found
        literals = _literals(action, m.start("args"), m.end("args"))
        named = [lit for lit in literals if (lit.group("name") or "").lower() in _VALUE_ARGS]
        unnamed = [lit for lit in literals if not lit.group("name")] if typing else []
        chosen = named[-1] if named else (unnamed[-1] if unnamed else None)
        if chosen is None:
            return None
        start, end = chosen.start("lit") + 1, chosen.end("lit") - 1
        return start, end, action[:start] + action[end:]
    found_value = _assigned(action) or _json_typed(action)
    if found_value:
        return found_value
    for form in _FORMS:
        shaped = form.match(action)
        if shaped:
            target = shaped.group("tgt") if "tgt" in form.groupindex else ""
            return shaped.start("val"), shaped.end("val"), target
    return None


_ASSIGN = re.compile(r"\.value\s*=\s*([\"'])")
_JSON_VALUE_KEYS = ("text", "value", "keys", "input", "content")


def _assigned(action: str) -> tuple[int, int, str] | None:
    """`el.value = "x"`: (start, end, target) of the value, in linear time (the closing quote is the last one)."""
    m = _ASSIGN.search(action)
    if m is None:
        return None
    end = action.rfind(m.group(1))
    if end <= m.end() or action[end + 1:].strip(" \t\n;"):
        return None
    return m.end(), end, action[: m.start()]


def _json_typed(action: str) -> tuple[int, int, str] | None:
    """{"action": "type", "selector": "#pw", "text": "x"}: the typed value of an action posted as a JSON object."""
    text = action.strip()
    if text[:1] + text[-1:] not in ("{}", "[]") or len(text) > 100_000:
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):  # a nesting deeper than the parser's stack is no action
        return None
    value = _json_value(obj, 0)
    if value is None:
        return None
    literal = json.dumps(value, ensure_ascii=False)[1:-1]
    start = action.find(literal)
    if start < 0:
        return None
    return start, start + len(literal), action[:start] + action[start + len(literal):]


def _json_value(obj: Any, depth: int) -> str | None:
    """The typed value of a JSON action: a value key of the object, else of the object or list inside it
    ({"input_text": {"index": 7, "text": "x"}}, [{"type": {...}}], {"args": {...}}), depth first, a few levels."""
    if depth > 4:
        return None
    if isinstance(obj, dict):
        value = next((str(obj[k]) for k in _JSON_VALUE_KEYS if isinstance(obj.get(k), str) and obj[k]), None)
        if value is not None:
            return value
        inner: list[Any] = [v for v in obj.values() if isinstance(v, dict | list)]
    elif isinstance(obj, list):
        inner = [v for v in obj[:16] if isinstance(v, dict | list)]
    else:
        return None
    return next((v for v in (_json_value(item, depth + 1) for item in inner) if v is not None), None)
