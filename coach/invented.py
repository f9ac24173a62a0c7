"""Made-up personal details: the agent typed a placeholder identity (John Doe, an example.com address, a 555
number, 123 Main Street) that its task does not give into a form. A form filled with invented details submits
someone who does not exist (a job application, a booking, a rebate claim): the task's own details, or a report that
the task does not give them, is the way on.

The typed value is never said back: it may be a real person's after all."""

from __future__ import annotations

import re

from coach.models import PartialRun, Signal
from coach.steps import typed_value
from coach.words import fold
from condenser import action_verb

RECENT = 6  # steps looked at
# what forms show as examples and agents copy: placeholder names, addresses, numbers and e-mail domains
_PLACEHOLDER = re.compile(
    r"\b(?:john|jane|joe|max|erika) (?:q\.? )?(?:doe|smith|public|mustermann)\b|@(?:example|test|email|domain|mail)\.(?:com|org|net)\b"
    r"|^(?:test|user|name|foo|abc|xxx|asdf|sample)@|\b(?:\(?555\)?[ .-]?\d{3}[ .-]?\d{4}|555[ .-]\d{4})\b"
    r"|\b(?:123|1234) (?:main|fake|example|test|any) (?:st|street|rd|road|ave|avenue)\b|\banytown\b"
    r"|^(?:first|last|full|your) ?name$|^(?:xxx+|n/?a|test|placeholder|lorem ipsum)$", re.I)


def invented(run: PartialRun) -> Signal | None:
    """The agent typed a placeholder identity its task does not give, in its last steps."""
    task = fold(run.task)
    for step in run.steps[-RECENT:]:
        if len(step.action) > 400 or action_verb(step.action) not in {"type", "fill", "search"}:
            continue  # (fill_search[19,John Doe, jd@example.com] too); a placeholder identity is short, and the typed
            # value's pattern costs the square of a long hostile action's length (tests/reliability/text_cost.py)
        value = typed_value(step.action)
        if not value or len(value) > 120:
            continue
        folded = fold(value).strip()
        digits = re.sub(r"\D", "", folded)
        given = folded in task or len(digits) >= 7 and digits in re.sub(r"\D", "", task)  # "(555) 123-4567" of 555-123-4567
        if _PLACEHOLDER.search(folded) and not given:
            return Signal("invented", 0.7, (
                "You have typed personal details that your task does not give (a placeholder name, e-mail address, "
                "phone number or street, such as forms show as examples) into a form. Do not make up personal "
                "details: fill in only what the task gives, and if the form requires more, report that the task does "
                "not give it instead of submitting it."), {})
    return None
