"""Hostile text costs time in proportion to its length: ingest (redaction and condensing) and the coach's reading of a
run, on runs of characters chosen to make a backtracking pattern retry (runs of one or two atoms, inside the action
formats the redaction parses). A field may hold EMS_LIMITS__MAX_FIELD_CHARS (20,000) characters and a run 500
steps, so anything worse than linear there is a way to stall a worker.

Found this way, each before its fix: a secret name's suffix split a run of capitals and digits in exponentially many
ways (80 characters took 3 s); the e-mail, quoted-literal, "TYPE: x [...]" and coach value patterns retried from
every place of a run (16k characters took 1-4 s); the card finder joined every span of digit groups (cubic).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from condenser import redact_text
from tests.conftest import ROOT


def test_hostile_text_costs_linear_time():
    """In a child process: a pattern that backtracks exponentially never returns, and only a process can be stopped."""
    try:
        done = subprocess.run([sys.executable, "-m", "tests.reliability.text_cost", "--json"], capture_output=True,
                              text=True, timeout=600, check=True, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail("measuring hostile texts did not finish in 600 s: some pattern backtracks without bound")
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(rows) > 500, len(rows)  # every family was measured
    worse = [f"{name} {field} {pre!r}+{fam!r}*: {small * 1000:.1f} ms at 4k, {large * 1000:.1f} ms at 16k"
             for name, field, pre, fam, small, large in rows if large > 8 * small and large > 0.05]
    assert not worse, "cost grows faster than the text (4x the text, >8x the time):\n" + "\n".join(worse)
    slowest = max(rows, key=lambda r: r[5])
    assert slowest[5] < 2.0, slowest  # 16k characters of any family: well under the 1-4 s the patterns took


@pytest.mark.parametrize("text", [
    "passwordsDE893704004405320130008a@b.co9 Neé DE89370400440532013000é5İ4 :4eß",  # 3 s before the fix
    "passwords" + "DE89370400440532013000" * 4 + " is x",  # exponential: would not have returned
    "api_key" + "A1" * 200 + "=hunter2",
])
def test_secret_names_with_long_suffixes_return(text):
    out = redact_text(text)
    assert isinstance(out, str) and out


@pytest.mark.parametrize("text,expected", [
    ("mail a@b.com&c@d.com now", "mail [EMAIL]&[EMAIL] now"),  # the second starts inside the first's run
    ("x" * 70 + "?john@example.com", "[EMAIL]"),  # "?" may stand in a local part: the whole run is one
    ("?" * 5000 + " a@b.io", "?" * 5000 + " [EMAIL]"),
])
def test_emails_found_where_they_start(text, expected):
    assert redact_text(text) == expected


def test_a_failing_checksum_library_fails_closed():
    """python-stdnum's Chinese RIC check raised KeyError on this number: redaction must not crash the route, and a
    value of the id's form is then redacted."""
    out = redact_text("ref 411333550011110000-4111 end")
    assert "411333550011110000" not in out


def test_suffix_parts_still_name_secrets():
    assert "hunter2" not in redact_text("client_secret_value_v2=hunter2")
    assert "hunter2" not in redact_text('"passwordConfirmation": "hunter2"')
    assert "hunter2" not in redact_text("DB_PASSWORD_PROD_EU_WEST_1=hunter2")


def test_a_number_the_checksum_library_fails_on_is_stored_redacted(client):
    """Through the API: the run is stored (201, not a 500) and the number is not in what is served back."""
    run = {"task": "pay the order", "domain": "shop.example.com", "outcome": {"success": True},
           "steps": [{"action": "TYPE: 411333550011110000 [textbox] Reference", "observation": "ok"}]}
    r = client.post("/v1/episodes", json=run)
    assert r.status_code == 201, r.text
    stored = client.get(f"/v1/episodes/{r.json()['id']}", params={"include_trajectory": "true"})
    assert stored.status_code == 200 and "411333550011110000" not in stored.text
    assert "pay the order" in stored.text
