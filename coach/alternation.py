"""Long alternations of word patterns compiled so that Python's engine tries them fast.

The deny patterns of `coach.steering` and `coach.orders` are alternations of a hundred branches or more, most of
which open at a word boundary (`\\bventa ...|\\bzelle ...|...`). The engine tries every branch at every position
of the text, so it tests that boundary once per branch per position. `any_of` gathers those branches under one
boundary (`\\b(?:venta ...|zelle ...)`): inside a word the one test fails and the position is done. The match
found is the same text's match or none, so a pattern used as a test (`search(...) is not None`) answers alike
(`tests/coach/test_alternation.py` compares the two forms on the order patterns and on generated texts); what it
saves a coaching call: `python -m benchmarks.guidance`.
"""

from __future__ import annotations

import re

_BOUNDARY = r"\b"


def branches(pattern: str) -> list[str]:
    """The top-level branches of a regular expression (split at `|` outside groups, classes and escapes)."""
    out, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            i += 1 if pattern[i + 1:i + 2] == "^" else 0
            i += 1 if pattern[i + 1:i + 2] == "]" else 0  # a "]" first in a class is a member
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    return out


_UNSPLITTABLE = re.compile(r"\(\?#|\(\?[a-zA-Z-]*x")  # a comment, or verbose mode, may hide a bar or a bracket


def any_of(*parts: str) -> re.Pattern[str]:
    """One compiled pattern for the alternation of `parts`, for tests only: the branches that open at a word
    boundary gathered under one boundary, the others after them. Refuses (ValueError) what moving branches would
    change: capturing groups (their numbers), global flags, comments and verbose mode, a part that is no whole
    expression."""
    plain = re.compile("|".join(parts))
    if plain.groups or plain.flags & ~re.UNICODE or any(_UNSPLITTABLE.search(part) for part in parts):
        raise ValueError("any_of takes patterns without capturing groups, global flags, comments or verbose mode")
    bounded, others = [], []
    for part in parts:
        for branch in branches(part):
            try:
                re.compile(branch)
            except re.error as exc:
                raise ValueError(f"any_of: {branch!r} is not a whole expression ({exc})") from None
            if branch.startswith(_BOUNDARY):
                bounded.append(branch[2:])
            else:
                others.append(branch)
    joined = ([rf"\b(?:{'|'.join(bounded)})"] if bounded else []) + others
    return re.compile("|".join(joined))
