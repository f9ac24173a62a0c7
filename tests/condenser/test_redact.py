"""Redaction: secrets never survive condensing."""

from __future__ import annotations

import pytest

from condenser import Trajectory, condense, redact_text, redact_trajectory
from condenser.redact import redact_task_and_actions


@pytest.mark.parametrize("secret,text", [
    ("jane.doe@example.com", "mail jane.doe@example.com now"),
    ("4111 1111 1111 1111", "card 4111 1111 1111 1111 exp 12/29"),
    ("5500-0000-0000-0004", "pay with 5500-0000-0000-0004"),
    ("sk-abcdefghijklmnop1234567890", "key sk-abcdefghijklmnop1234567890"),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123", "token ghp_abcdefghijklmnopqrstuvwxyz0123"),
    ("eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4", "Authorization: Bearer eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4"),
    ("hunter2hunter2", "url?password=hunter2hunter2&x=1"),
    ("abcdef123456XYZ", "Bearer abcdef123456XYZ"),
])
def test_redact_text(secret, text):
    out = redact_text(text)
    assert secret not in out


def test_non_card_numbers_survive():
    assert "1234 5678" in redact_text("order 1234 5678")
    assert "2024" in redact_text("in 2024 we")


@pytest.mark.parametrize("action", [
    'Type "S3cret!pass"',
    "TYPE: S3cret!pass [textbox] Password",
    "fill('#password', 'S3cret!pass')",
    "fill_form[12][S3cret!pass]",
])
def test_typed_password_is_redacted_everywhere(action):
    t = Trajectory.model_validate({
        "task": "Log in as jane@corp.com",
        "steps": [
            {"action": "click[3]", "thought": "I will enter the password into the password field"},
            {"action": action, "thought": "Typing the password S3cret!pass", "observation": "Password field focused"},
            {"action": "click[9]", "observation": "welcome; your password S3cret!pass was accepted"},
        ],
    })
    ep = condense(t)
    blob = ep.model_dump_json()
    assert "S3cret!pass" not in blob
    assert "jane@corp.com" not in blob
    assert "[SECRET]" in ep.trajectory.steps[1].action


def test_typed_search_text_is_kept():
    t = Trajectory.model_validate({"task": "search", "steps": [{"action": 'Type "blue kettle"', "thought": "search for it"}]})
    assert condense(t).trajectory.steps[0].action == 'Type "blue kettle"'


@pytest.mark.parametrize("action", [
    'Type "S3cret!pass"',
    "fill('#password', 'S3cret!pass')",
    "type[7][mail jane@corp.com]",
])
def test_query_redaction_matches_the_full_redaction(action):
    """What a query embeds (task + actions) is redacted exactly as the whole run would be."""
    t = Trajectory.model_validate({
        "task": "Log in as jane@corp.com with key sk-abcdefghijklmnop1234567890",
        "steps": [
            {"action": "click[3]", "thought": "enter the password", "observation": "Password field"},
            {"action": action, "thought": "Typing the password", "observation": "Password field focused"},
            {"action": "click[S3cret!pass]", "url": "https://example.com/login"},
        ],
    })
    task, actions = redact_task_and_actions(t)
    full = redact_trajectory(t)
    assert (task, actions) == (full.task, full.actions)
    assert "jane@corp.com" not in task and "sk-abcdef" not in task
    if "S3cret!pass" in action:  # typed into a password field: masked in every later action too
        assert not any("S3cret!pass" in a for a in actions)
    else:
        assert "jane@corp.com" not in actions[1]
