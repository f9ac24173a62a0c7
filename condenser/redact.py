"""Redaction of secrets and personal data in every text field of a run, metadata included.

Text is NFKC-normalized and stripped of invisible format characters (zero-width, bidi controls, soft hyphens)
before detection, so full-width digits, non-breaking spaces and hidden joiners change nothing. A text in which
nothing is found is returned as it came (not normalized). What is looked for: values typed into password-like
fields (and that value wherever else it occurs in the run), private keys, credentials in URLs and connection
strings, provider keys and tokens, values of secret-named fields (`password=`, `"pwd": "…"`, "my password is …"),
e-mail addresses, IBANs, national ids, card numbers and phone numbers (`condenser.credentials`, `condenser.personal`
and the modules they call). A typed value is found by `condenser.typed_values` and judged by `condenser.typed_fields`.
"""

from __future__ import annotations

import re
from typing import TypeVar
from urllib.parse import unquote

from condenser import credentials, personal
from condenser.lookalikes import normalize
from condenser.models import Outcome, Trajectory
from condenser.placeholders import ADDRESS, CARD, EMAIL, IBAN, NATIONAL_ID, PHONE, SECRET
from condenser.scan import Hints, Hits, literal_finder
from condenser.typed_fields import typed_secret

RunT = TypeVar("RunT", bound=Trajectory)  # a Trajectory or a subclass (a live run): the copy keeps its class

__all__ = ["ADDRESS", "CARD", "EMAIL", "IBAN", "NATIONAL_ID", "PHONE", "SECRET", "normalize", "redact_task_and_actions",
           "redact_text", "redact_texts", "redact_trajectory"]

_DIGIT_RUNS = re.compile(r"\d+")


def _digits(text: str) -> int:
    """How many digits `text` holds (str.count is faster than a regex on ASCII)."""
    if text.isascii():
        return len(text) - len(text.encode().translate(None, b"0123456789"))
    return sum(map(len, _DIGIT_RUNS.findall(text)))


_HINTS = Hints({**credentials.HINTS, **personal.HINTS})
_WORD = re.compile(r"\w")


# literal values to replace: by [SECRET], or (a mapping) each by its own placeholder
Secrets = set[str] | frozenset[str] | dict[str, str]


def _scrub_secrets(texts: list[str], extra_secrets: Secrets) -> list[str]:
    """Every occurrence of a value in `extra_secrets` as a whole word (a password "submit" leaves "submitted"
    alone), in any letter case, replaced (by [SECRET], or by the placeholder a mapping gives the value),
    overlapping ones together.

    One automaton pass a text: a run of many steps that each type a password, with texts that quote them all,
    took a substitution per value per text (cubic: 200 steps, 6.6 s).
    """
    given = extra_secrets if isinstance(extra_secrets, dict) else dict.fromkeys(extra_secrets, SECRET)
    placeholders = {s: p for s, p in given.items() if s}
    for value, placeholder in list(placeholders.items()):  # a page that echoes a value in capitals, or lower case
        low = value.lower()
        if low != value:
            placeholders[low] = placeholder if placeholders.get(low, placeholder) == placeholder else SECRET
    secrets = sorted(placeholders)
    if not secrets:
        return texts
    occurrences = literal_finder(secrets)
    out = []
    for text in texts:
        spans: list[tuple[int, int, str]] = []
        low = text.lower()  # the lower-case forms are found in the text lowered, character for character
        if len(low) != len(text):  # a dotted capital I lowers to two characters: it stays as it is
            low = "".join(c if len(lc := c.lower()) != 1 else lc for c in text)
        for i, start, end in occurrences(low):
            secret = secrets[i]
            if (secret[0].isalnum() or secret[0] == "_") and start and _WORD.match(text, start - 1):
                continue
            if (secret[-1].isalnum() or secret[-1] == "_") and _WORD.match(text, end):
                continue
            spans.append((start, end, placeholders[secret]))
        if not spans:
            out.append(text)
            continue
        spans.sort()
        parts, last, cover, mark = [], 0, -1, SECRET
        for start, end, placeholder in spans:
            if start >= cover:  # a new group (occurrences that only touch stay two)
                if cover >= 0:
                    parts.append(mark)
                parts.append(text[last:start])
                mark = placeholder
            elif placeholder == SECRET:
                mark = SECRET  # a group that holds a secret says so
            cover = max(cover, end)
            last = cover
        parts.append(mark)
        out.append("".join(parts) + text[cover:])
    return out


def redact_text(text: str, extra_secrets: Secrets = frozenset()) -> str:
    """`text` with every secret and personal datum replaced (by [SECRET], [EMAIL], [CARD], [IBAN], [ID], [PHONE];
    a street address typed into an address field by [ADDRESS]);
    `extra_secrets` are literal values to replace too (normalized, as `normalize` leaves them)."""
    return redact_texts([text], extra_secrets)[0]


# Escaped separators read as the spaces they stand for: a JSON string's "\n" or a link's "%20" right before a secret
# made its first letter no word start ("creds\nAKIA...", "?text=key%20sk-proj-..."). Each is read as a space that
# NFKC turns into a plain one (so none is left in a normalized text) and written back as it came.
_ESCAPED = re.compile(r"\\[ntr]|%(?:20|0[aAdD]|09|3[aA])")
_AS_SPACE = {"\\n": "\u2000", "\\r": "\u2001", "\\t": "\u2002", "%20": "\u2003", "%0A": "\u2004", "%0a": "\u2005",
             "%09": "\u2006", "%0D": "\u2007", "%0d": "\u2008", "+": "\u2009",
             "%3A": "\uff1a", "%3a": "\ufe13"}  # colons NFKC leaves none of, the first one read as a colon too
_WRITTEN_BACK = str.maketrans({space: escaped for escaped, space in _AS_SPACE.items()})
# the same text for the hint words, character for character ("\npin: 4821": " pin" is a hint at a word start)
_HINTED = str.maketrans({space: ":" if escaped.startswith("%3") else " " for escaped, space in _AS_SPACE.items()})
# a query's value of words joined by "+", where "+" is a space ("?q=my+password+is+x"); a value of other parts is a
# token whose "+" is its own ("?nonce=a8Bz+Qp3/kL9+mN2xY7w==")
_QUERY_VALUE = re.compile(r"(?<=[=?&])[^&#\s=?]*\+[^&#\s=?]*")
_WORD_PART = re.compile(r"[A-Za-z]+(?:%[0-9A-Fa-f]{2}[A-Za-z]*)*[\uff1a\ufe13]?")  # "Session%3A", "Keynote%2C", "B"


def _plus_spaced(m: re.Match[str]) -> str:
    parts = m.group(0).split("+")
    words = sum(_WORD_PART.fullmatch(part) is not None for part in parts)
    return m.group(0).replace("+", "\u2009") if 2 * words >= len(parts) else m.group(0)


def _spaced(text: str) -> str:
    if "\\" not in text and "%" not in text and "+" not in text:
        return text
    text = _ESCAPED.sub(lambda m: _AS_SPACE[m.group(0)], text)
    return _QUERY_VALUE.sub(_plus_spaced, text) if "+" in text and "?" in text else text


def redact_texts(texts: list[str], extra_secrets: Secrets = frozenset()) -> list[str]:
    """`redact_text` of each of `texts`, with the hint words of all of them found in one pass (one release of the
    GIL for the lot: see `Hints.find_many`)."""
    norms = [normalize(text) for text in texts]
    views = [_spaced(norm) for norm in norms]
    scrubbed = _scrub_secrets(views, extra_secrets) if extra_secrets else views
    out = []
    hinted = [body.translate(_HINTED) if view is not norm else body
              for body, view, norm in zip(scrubbed, views, norms, strict=True)]
    for text, norm, view, body, hits in zip(texts, norms, views, scrubbed, _HINTS.find_many(hinted), strict=True):
        body = _detected(body, hits)
        if view is not norm:
            body = body.translate(_WRITTEN_BACK)
        if "%" in body and _ENCODED.search(body):
            body = _decoded(body)
        out.append(text if body == norm else body)
    return out


def _find(text: str) -> Hits | None:
    return _HINTS.find(text.translate(_HINTED))


def _detected(body: str, hits: Hits | None) -> str:
    redacted = credentials.redact_credentials(body, hits, _find)
    if redacted != body:  # the hints' offsets are of the text before the credentials were replaced
        body, hits = redacted, _find(redacted)
    return personal.redact_personal(body, hits, _digits(body))


# A link's words percent-encoded ("?q=Parol%C4%83%3A+x", "/notes/my%20password%27s%20x"): read decoded too. When the
# decoded text holds a secret the first reading missed, it is kept decoded, with the secret replaced. Only what
# spells words is decoded (letters of any script, spaces, quotes, commas, colons); "%3D", "%26", "%2F" stay as they
# are, or a token's base64 ("...Pw%3D%3D&amzn-r=%2F") would read as names and values.
_ENCODED = re.compile(r"%(?:[C-Fc-f][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]|2[27Cc])")  # spaces and colons: read in `_spaced`
_ESCAPE_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_WORDLIKE = re.compile(r"[^\W\d_]*(?:[ ',:\"][^\W\d_]*)*|[ ',:\"]+")


def _words_decoded(m: re.Match[str]) -> str:
    try:
        text = unquote(m.group(0), errors="strict")
    except UnicodeDecodeError:
        return m.group(0)
    return text if _WORDLIKE.fullmatch(text) else m.group(0)


def _decoded(body: str) -> str:
    decoded = normalize(_ESCAPE_RUN.sub(_words_decoded, body))
    if "+" in decoded and "?" in decoded:
        decoded = _QUERY_VALUE.sub(lambda m: _plus_spaced(m).replace("\u2009", " "), decoded)
    if decoded == body:
        return body
    view = _spaced(decoded)
    hits = _find(view)
    if hits == {}:
        return body
    redacted = _detected(view, hits)
    if view is not decoded:
        redacted = redacted.translate(_WRITTEN_BACK)
    return redacted if redacted != decoded else body


def _typed_secrets(trajectory: Trajectory) -> tuple[dict[str, str], dict[int, str]]:
    """Values typed into password-like fields (3+ characters) with their placeholders, and the actions with them
    masked (by step)."""
    secrets: dict[str, str] = {}
    masked_actions: dict[int, str] = {}
    for i, step in enumerate(trajectory.steps):
        found = typed_secret(step, trajectory.steps[i - 1].action if i else None)
        if found:  # a short plain word ("submit") is masked in its action only, not throughout the run, unless the
            # field itself is a password field ("monkey" typed into type=password is a password)
            forms, masked, field = found
            secrets |= {v: mark for v, mark in forms.items()
                        if len(v) >= 3 and (field or not (len(v) < 8 and v.isalpha() and v.islower()))}
            masked_actions[i] = masked
    return secrets, masked_actions


def redact_task_and_actions(trajectory: Trajectory) -> tuple[str, list[str]]:
    """The task and actions of a run with every secret replaced, as `redact_trajectory` would leave them:
    what a query embeds, without redacting (or copying) observations and thoughts."""
    secrets, masked_actions = _typed_secrets(trajectory)
    task, *actions = redact_texts([trajectory.task, *(masked_actions.get(i, s.action)
                                                      for i, s in enumerate(trajectory.steps))], secrets)
    return task, actions


def redact_trajectory(trajectory: RunT) -> RunT:
    """A copy of `trajectory` with every secret replaced, in every text field: task, urls, steps, outcome
    status, task_id, agent, model, domain, tag keys and values (all redacted in one `redact_texts` call)."""
    secrets, masked_actions = _typed_secrets(trajectory)
    texts: list[str] = []

    def put(value: str | None) -> int | None:
        return None if value is None else put_text(value)

    def put_text(value: str) -> int:
        texts.append(value)
        return len(texts) - 1

    step_fields = ("url", "observation", "thought", "action", "error")
    at_steps = [{name: put(masked_actions.get(i, step.action) if name == "action" else getattr(step, name))
                 for name in step_fields} for i, step in enumerate(trajectory.steps)]
    run_fields = ("task", "start_url", "task_id", "agent", "model", "domain")
    at_run = {name: put(getattr(trajectory, name)) for name in run_fields}
    at_status = put(trajectory.outcome.status)
    at_tags = [(put_text(k), put_text(v)) for k, v in trajectory.tags.items()]
    done = redact_texts(texts, secrets)

    def get(at: int | None) -> str | None:
        return None if at is None else done[at]

    steps = []
    for step, at in zip(trajectory.steps, at_steps, strict=True):
        update = {name: get(i) for name, i in at.items()}
        # most steps hold no secret: keep the (immutable) step itself rather than copying it
        unchanged = all(value == getattr(step, name) for name, value in update.items())
        steps.append(step if unchanged else step.model_copy(update=update))
    outcome: Outcome = trajectory.outcome
    if outcome.status is not None and (status := get(at_status)) != outcome.status:
        outcome = outcome.model_copy(update={"status": status})
    return trajectory.model_copy(
        update={
            **{name: get(i) for name, i in at_run.items()},
            "steps": steps,
            "outcome": outcome,
            "tags": {done[k]: done[v] for k, v in at_tags},
        }
    )
