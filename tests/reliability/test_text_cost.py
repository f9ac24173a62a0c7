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
import time

import pytest

from coach import Neighbour, PartialRun, advise
from condenser import Trajectory, condense, redact_text
from tests.conftest import ROOT


def test_hostile_text_costs_linear_time():
    """In a child process: a pattern that backtracks exponentially never returns, and only a process can be stopped."""
    try:
        done = subprocess.run([sys.executable, "-m", "tests.reliability.text_cost", "--json"], capture_output=True,
                              text=True, timeout=600, check=True, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail("measuring hostile texts did not finish in 600 s: some pattern backtracks without bound")
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(rows) > 1000, len(rows)  # every family was measured
    worse = [f"{name} {field} {pre!r}+{fam!r}*: {small * 1000:.1f} ms at 4k, {large * 1000:.1f} ms at 16k"
             for name, field, pre, fam, small, large in rows if large > 8 * small and large > 0.05]
    assert not worse, "cost grows faster than the text (4x the text, >8x the time):\n" + "\n".join(worse)
    slowest = max(rows, key=lambda r: r[5])
    assert slowest[5] < 2.0, slowest  # 16k characters of any family: well under the 1-4 s the patterns took


@pytest.mark.parametrize("text", [
    "x-at-a" + "-dot-1" * 40 + "-",  # a spelled-out address: each "-dot-" doubled the time (20: 2.4 s)
    "x_at_a" + "_dot_1" * 40 + "_",
    "passwordsDE893704004405320130008a@b.co9 Neé DE89370400440532013000é5İ4 :4eß",  # 3 s before the fix
    "passwords" + "DE89370400440532013000" * 4 + " is x",  # exponential: would not have returned
    "api_key" + "A1" * 200 + "=hunter2",
])
def test_exponential_cases_return(text):
    out = redact_text(text)
    assert isinstance(out, str) and out


@pytest.mark.parametrize("text,expected", [
    ("mail a@b.com&c@d.com now", "mail [EMAIL]&[EMAIL] now"),  # the second starts inside the first's run
    # "?" (like & / =) is read as a link's delimiter, not part of a name, since 2026-12-07: the address starts after it
    ("x" * 70 + "?john@example.com", "x" * 70 + "?[EMAIL]"), ("x" * 70 + "!john@example.com", "[EMAIL]"),
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


def _typed_passwords(k: int) -> float:
    """Seconds to condense a run of `k` steps that each type a password, with an observation and a thought that
    quote all of them."""
    typed = [f"Pw{i:04d}x" for i in range(k)]
    quoted = " ".join(typed)
    run = Trajectory.model_validate({"task": "buy", "outcome": {"success": False}, "steps": [
        {"action": f"type: {p} [textbox] Password", "observation": quoted, "thought": quoted} for p in typed]})
    start = time.perf_counter()
    episode = condense(run)
    took = time.perf_counter() - start
    assert not any(p in episode.trajectory.model_dump_json() for p in typed[::7])
    return took


def test_many_typed_passwords_cost_linear_time():
    """The typed values were replaced one substitution per value per text: cubic in the steps (200: 6.6 s). The text
    grows with k^2 here, so linear time in it is 16x from 100 to 400 steps; the old way was 64x."""
    small, large = min(_typed_passwords(100) for _ in range(2)), _typed_passwords(400)
    assert large < 32 * small + 0.2, (small, large)


def test_a_long_action_against_long_neighbours_is_cheap():
    """The run's last action was tokenized again for every step of every neighbour: 8 neighbours of 500 steps against
    a 16k-character action took 12.7 s."""
    steps = [{"action": "click x", "url": "https://shop.example.com/"}] * 500
    brief = condense(Trajectory.model_validate({"task": "buy a lamp", "steps": steps,
                                                "outcome": {"success": False}})).steps_brief
    neighbours = [Neighbour(id=i, similarity=0.9, success=False, domain="shop.example.com", task="buy a lamp",
                            summary="failed", n_steps=500, steps_brief=brief, verified=True) for i in range(8)]
    run = PartialRun.model_validate({"task": "buy a lamp", "start_url": "https://shop.example.com/", "steps": [
        {"action": "click " + "ab " * 5333, "url": "https://shop.example.com/"}]})
    start = time.perf_counter()
    advise(run, neighbours)
    assert time.perf_counter() - start < 2.0
