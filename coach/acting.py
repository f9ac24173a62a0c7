"""What the agent acted on, and its last action said as a fact: the visible label of a step's target, and
"clicking 'View cart'" (never "(click 'View cart')", which reads as an order)."""

from __future__ import annotations

import re

from coach.steps import action_label, typed_value
from coach.words import label, task_label
from condenser import Step, action_verb, describe_action


def step_target(step: Step, task: str = "") -> str | None:
    """The visible label of what a step acted on: from the action text, else from the agent's own thought.

    For typing, the field's label, never the typed text; a label in another script than the task's is
    described, not quoted."""
    if action_verb(step.action) in {"type", "search", "select"}:
        hint = re.search(r"\[(?:textbox|searchbox|combobox|input|select|listbox)\]\s*([^\[\]]{2,40})$", step.action.strip(), re.I)
        field = task_label(hint.group(1), task) if hint else None
        value = typed_value(step.action)
        return None if field is None or (value and value.lower() in field.lower()) else field
    if action_verb(step.action) not in {"click", "hover", "drag", "navigate"}:
        return None  # press_sequentially("..."), write("...") and their kin carry typed text, never a label
    direct = action_label(step.action)
    if direct and task and not task_label(direct, task):
        return None
    if direct:
        return direct
    desc = describe_action(step.action, step.thought)
    m = re.search(r"labeled '([^']{1,60})'", desc)
    return label(m.group(1)) if m else None


GERUND = {"click": "clicking", "type": "typing into", "select": "choosing in", "hover": "hovering over",
           "press": "pressing", "check": "checking", "uncheck": "unchecking", "fill": "filling", "open": "opening",
           "search": "searching for", "navigate": "opening", "scroll": "scrolling to", "answer": "answering"}


def doing_words(action: str, target: str) -> str:
    """"clicking 'View cart'": what the agent did, said as a fact ("(click 'View cart')" read as an order)."""
    verb = action_verb(action)
    return f"{GERUND.get(verb, 'acting on')} '{target}'"
