"""Task identity: a stable task id derived from the task text, and task templates (the task, parameters masked).

Runs of the same task template ("Book a table for 2 at Nobu on May 3" / "... for 4 at Zuma on June 1") differ
only in their parameters: numbers, dates, quoted strings and proper names. Masking those and comparing what is
left finds them where a sentence embedding mostly sees the shared site.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

from condenser.sites import registrable_domain

_MONTHS = (r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
           r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
           r"|today|tomorrow|tonight|yesterday")
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.I)
_QUOTED = re.compile(r"\"[^\"]{1,80}\"|“[^”]{1,80}”|'[^']{2,80}'|‘[^’]{2,80}’")
_NUMBER = re.compile(r"[$€£¥]?\d[\d,.:/-]*(?:st|nd|rd|th|am|pm|k|m)?\b", re.I)
_MONTH = re.compile(rf"\b(?:{_MONTHS})\b\.?", re.I)
# Capitalized words inside a sentence (names of places, products, people): parameters of the template.
_PROPER = re.compile(r"(?<=[\w,;:)] )[A-Z][\w&'.-]*(?: (?:of |de |the |and |& )?[A-Z][\w&'.-]*)*")
_WORD = re.compile(r"<[a-z]>|[^\W\d_]+")
_SPACE = re.compile(r"\s+")


def normalize_task(task: str) -> str:
    """Task text for identity: NFKC, lower case, whitespace collapsed, trailing punctuation dropped."""
    text = unicodedata.normalize("NFKC", task).lower()
    return _SPACE.sub(" ", text).strip().rstrip(".!?;: ")


def derive_task_id(task: str) -> str:
    """The task id of a run that posted none: `t-` + 16 hex digits of sha256(normalize_task(task)).

    Two runs of the same task text (up to case, spacing and trailing punctuation) share it, so leaving a task
    out of retrieval (`exclude_task_id`) works for every ingest path.
    """
    return "t-" + hashlib.sha256(normalize_task(task).encode("utf-8")).hexdigest()[:16]


_SITE_PREPOSITION = re.compile(r" (?:in|on|at|using|via|from|with) (?:the )?")
_SITE_WORDS = re.compile(r" (?:website|web site|site|app|page|store)$")


def task_on_site(task: str, domain: str | None) -> str:
    """`normalize_task(task)` without a closing "in <site>" that names the run's own site: data sets write one task
    both ways ("Find parking in Chicago in spothero", "Find parking in Chicago."; "... in new.mta.info", "... on
    the Six Flags website"). Another place named last stays ("... in Chicago" on spothero.com)."""
    text = normalize_task(task)
    host = (domain or "").lower().removeprefix("www.")
    name = (registrable_domain(host) or host).split(".")[0]
    if not name:
        return text
    for m in reversed(list(_SITE_PREPOSITION.finditer(text))):
        tail = _SITE_WORDS.sub("", text[m.end():]).strip(" .")
        if len(tail.split()) > 3:
            break
        parts = tail.replace(" ", "").split(".")
        if name in parts or tail.replace(" ", "") == host:
            return text[: m.start()].rstrip(" ,.;:")
    return text


@lru_cache(maxsize=65536)
def task_template(task: str) -> tuple[str, ...]:
    """The task's words with its parameters masked: `<u>` url, `<q>` quoted, `<n>` number/date, `<p>` name."""
    text = unicodedata.normalize("NFKC", task)
    text = _URL.sub(" <u> ", text)
    text = _QUOTED.sub(" <q> ", text)
    text = _MONTH.sub(" <n> ", text)
    text = _NUMBER.sub(" <n> ", text)
    text = _PROPER.sub(" <p> ", text)
    words = _WORD.findall(text.lower())
    out: list[str] = []
    for w in words:  # "<n> <n>" (a date) is one parameter
        if not (out and w.startswith("<") and out[-1] == w):
            out.append(w)
    return tuple(out)


@lru_cache(maxsize=16384)  # tasks are at most EMS_LIMITS__MAX_TASK_CHARS (2,000) long
def _template_sets(task: str) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """A task template's words and word pairs (the coach compares one run's task with a pool of stored ones)."""
    t = task_template(task)
    return frozenset(t), frozenset(zip(t, t[1:], strict=False))


def template_similarity(a: str, b: str) -> float:
    """How alike two tasks are once their parameters are masked: mean of word and word-pair Jaccard, in [0, 1]."""
    (sa, pa), (sb, pb) = _template_sets(a), _template_sets(b)
    if not sa or not sb:
        return 0.0
    words = len(sa & sb) / len(sa | sb)
    pairs = len(pa & pb) / len(pa | pb) if pa or pb else words
    return 0.5 * words + 0.5 * pairs


SAME_TEMPLATE = 0.6  # template_similarity at or above which two tasks are taken for one template
