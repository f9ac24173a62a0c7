"""The task's own values in another run's steps: a value typed where the task holds it, or where the two tasks
differ ("Barclays Center" typed for "... at Barclays Center", "Madison Square Garden" of "... at Madison Square
Garden"); a secret the task gives, planned only into a field for one; codes a task seldom gives; another search's
result count in a button's label. Only words of the current task come out, never the other run's."""

from __future__ import annotations

import difflib
import re

from coach.words import clean, fold, label


def value_in_task(value: str | None, task: str) -> str | None:
    """`value` when the current task contains it (case- and space-insensitive), else None."""
    v = clean(value)
    if not v or len(v) > 60:
        return None

    def norm(s: str) -> str:
        return " ".join(fold(s).split())

    if re.fullmatch(r"[$€£]?\d[\d.,]*", v):  # a number the task holds as a number ("100" of "$100 to $200", not of
        return v if re.search(rf"(?<![\d.,]){re.escape(v)}(?![\d]|[.,]\d)", clean(task)) else None  # "$1005")
    return v if norm(v) in norm(clean(task)) and label(v) else None


# what a task says just before a secret it gives, and the fields that take one
_SECRET_BEFORE = re.compile(r"(?:password|passphrase|passcode|pass|pwd|pin|cvv|cvc|cvv2|security code|card(?: number)?"
                            r"|credit card|debit card|account number|routing number|iban|ssn|social security(?: number)?"
                            r"|otp|one[- ]time code|verification code|code)\W{0,3}(?:is\W{1,2}|of\W{1,2}|=\W?)?$")
SECRET_FIELD = re.compile(r"password|passphrase|passcode|\bpin\b|card|cvv|cvc|security code|expir|payment|iban|account"
                           r"|routing|ssn|social security|one[- ]time|verification|\botp\b|\bcode\b")


def secret_of_task(value: str, task: str) -> bool:
    """`value` is a secret the task gives: the words just before it name one ("password tangerine", "PIN 4721", "card
    4111 ..."), or it is a card's number (13-19 digits)."""
    digits = re.sub(r"[\s-]", "", value)
    if digits.isdigit() and 13 <= len(digits) <= 19:
        return True
    text = fold(clean(task))
    at = text.find(fold(value))
    return at >= 0 and bool(_SECRET_BEFORE.search(text[max(0, at - 40):at].rstrip()))


# fields for codes a shop offers and a task seldom gives: filled only with the task's own
OPTIONAL_CODE = re.compile(r"coupon|promo|voucher|gift ?card|discount|referral|rewards?|kohl'?s cash")

_WORD = re.compile(r"\w[\w'.&-]*")


# words that tie a value to its sentence ("McDonalds located in", "near the"), trimmed off an aligned value's edges
_GLUE = frozenset("located situated based found near nearby around close in at on of for from to with by the a an "
                  "and or".split())


def aligned_value(value: str | None, other_task: str | None, task: str) -> str | None:
    """What the task says where the other run's task said `value`, when the two tasks differ just there ("Barclays
    Center" typed for "... happening at Barclays Center in parking": "Madison Square Garden" of "... happening at
    Madison Square Garden in parking"; "John" of "John Doe" where the task has "Monty Lue": "Monty"), else None.

    Only words of the task itself come out (checked as `value_in_task`), never the other run's."""
    if not value or not other_task or len(value) > 60:
        return None
    theirs, mine = list(_WORD.finditer(clean(other_task))), list(_WORD.finditer(clean(task)))
    a, b = [fold(m.group(0)) for m in theirs], [fold(m.group(0)) for m in mine]
    want = [fold(w) for w in _WORD.findall(clean(value))]
    if not want or len(want) > 6:
        return None
    starts = [i for i in range(len(a) - len(want) + 1) if a[i:i + len(want)] == want]
    if len(starts) != 1:
        return None  # not in the other task, or twice there: which of the task's words stand for it is unknown
    i, j = starts[0], starts[0] + len(want)
    for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "replace" or not (a0 <= i and j <= a1):
            continue
        if (a0, a1) == (i, j):
            lo, hi = b0, b1  # the whole differing part: "Barclays Center" -> "Madison Square Garden"
        elif a1 - a0 == b1 - b0:
            lo, hi = b0 + (i - a0), b0 + (j - a0)  # word for word: "John" of "John Doe" -> "Monty" of "Monty Lue"
        else:
            return None
        while hi - lo > 1 and b[lo] in _GLUE:
            lo += 1  # "located in", "near": the words that tie a value to the task's sentence are no part of it
        while hi - lo > 1 and b[hi - 1] in _GLUE:
            hi -= 1
        if not 0 < hi - lo <= 6:
            return None
        return value_in_task(clean(task)[mine[lo].start():mine[hi - 1].end()], task)
    return None


# a button that counts what another run's search found ("Show 664 stays", "See all 1,204 results"): the count is its
_RESULT_COUNT = re.compile(r"(?i)^((?:show|see|view|display|browse|explore|load|get)(?: all| more| the)?\s+)(\d[\d,.]*\+?)"
                      r"(\s+[a-z]+(?:\s+[a-z]+)?)$|^(\d[\d,.]*\+?)(\s+(?:results?|items?|stays|homes|listings"
                      r"|properties|hotels|matches|products|deals|options|cars|vehicles|flights|jobs|restaurants|places"
                      r"|tours|activities|reviews))$")


def uncounted(target: str, task: str) -> str:
    """A label with another search's count in it, with "…" for the count ("Show … stays"); the label as it is when
    it counts nothing or the task holds the number."""
    m = _RESULT_COUNT.match(target)
    if not m:
        return target
    number = m.group(2) or m.group(4)
    if re.search(rf"(?<![\d.,]){re.escape(number)}(?![\d])", clean(task)):
        return target
    return target.replace(number, "…", 1)
