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

from condenser import credentials, personal
from condenser.lookalikes import normalize
from condenser.models import Outcome, Trajectory
from condenser.placeholders import ADDRESS, CARD, EMAIL, IBAN, NATIONAL_ID, PHONE, SECRET
from condenser.scan import Hints, literal_finder
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


def redact_texts(texts: list[str], extra_secrets: Secrets = frozenset()) -> list[str]:
    """`redact_text` of each of `texts`, with the hint words of all of them found in one pass (one release of the
    GIL for the lot: see `Hints.find_many`)."""
    norms = [normalize(text) for text in texts]
    scrubbed = _scrub_secrets(norms, extra_secrets) if extra_secrets else norms
    out = []
    for text, norm, body, hits in zip(texts, norms, scrubbed, _HINTS.find_many(scrubbed), strict=True):
        redacted = credentials.redact_credentials(body, hits, _HINTS.find)
        if redacted != body:  # the hints' offsets are of the text before the credentials were replaced
            body, hits = redacted, _HINTS.find(redacted)
        body = personal.redact_personal(body, hits, _digits(body))
        out.append(text if body == norm else body)
    return out


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
