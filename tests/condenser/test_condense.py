"""Condenser: models, normalization, categories, hash, summaries, on real dev runs and small cases."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from condenser import (
    FailureCategory,
    Trajectory,
    condense,
    describe_action,
    domain_of,
    error_patterns,
    failure_categories,
    normalize_action,
    normalize_error,
    trajectory_hash,
)
from ems_service.dataset import to_trajectory
from tests.conftest import DEV_FILES, dev_records


def run(actions, *, success=False, status=None, errors=None, urls=None, rewards=None, task="Buy a kettle"):
    steps = []
    for i, action in enumerate(actions):
        steps.append({"action": action, "error": (errors or {}).get(i), "url": (urls or {}).get(i),
                      "reward": (rewards or {}).get(i)})
    return Trajectory.model_validate(
        {"task": task, "steps": steps, "outcome": {"success": success, "status": status}, "start_url": "https://www.shop.example.com/x"}
    )


def test_action_object_is_rendered_to_a_string():
    t = Trajectory.model_validate({"task": "t", "steps": [{"action": {"name": "click", "args": ["207"]}}]})
    assert t.steps[0].action == 'click("207")'


@pytest.mark.parametrize("bad", [
    {"task": "t", "steps": []},
    {"task": "", "steps": [{"action": "click"}]},
    {"task": "   ", "steps": [{"action": "click"}]},
    {"task": "t", "steps": [{"action": ""}]},
    {"task": "t", "steps": [{"action": "x", "reward": float("nan")}]},
    {"task": "t", "steps": [{"action": "x", "reward": float("inf")}]},
    {"task": "t", "steps": [{"action": 5}]},
    {"task": "t", "steps": [{"action": "x"}], "outcome": {"label_source": "oracle"}},
])
def test_invalid_trajectories_are_rejected(bad):
    with pytest.raises(ValidationError):
        Trajectory.model_validate(bad)


@pytest.mark.parametrize("url,domain", [
    ("https://www.amazon.com/dp/B07", "amazon.com"),
    ("http://store.steampowered.com:8080/app", "store.steampowered.com"),
    ("careers.walmart.com/jobs", "careers.walmart.com"),
    ("about:blank", None),
    (None, None),
])
def test_domain_of(url, domain):
    assert domain_of(url) == domain


def test_domain_is_derived_from_start_url_then_steps():
    t = Trajectory.model_validate({"task": "t", "steps": [{"action": "a", "url": "https://www.b.org/x"}]})
    assert t.domain == "b.org"
    t = Trajectory.model_validate({"task": "t", "start_url": "https://www.a.com", "steps": [{"action": "a", "url": "https://b.org"}]})
    assert t.domain == "a.com"


@pytest.mark.parametrize("action,expected", [
    ("click[82]", "click"),
    ("Click at (600, 475)", "click"),
    ("CLICK [img] GameStop Digital Gift Cards", "click gamestop digital gift cards"),
    ("TYPE: Tim Stebee [textbox] Recipient Name", "type tim stebee recipient name"),
    ('Type "support services"', "type support services"),
    ("google_search[Dota 2 Steam]", "search dota 2 steam"),
    ("fill_search[35,$100 Gift Card]", "search $100 gift card"),
    ("Scroll (delta_x=0, delta_y=400)", "scroll"),
    ("Press ENTER", "press enter"),
    ("SELECT: PC [combobox] Platform", "select pc platform"),
])
def test_normalize_action(action, expected):
    assert normalize_action(action) == expected


def test_normalize_error_replaces_volatile_parts():
    a = normalize_error('Timeout 30000ms exceeded waiting for "#login-7" at https://x.com/a?id=3')
    b = normalize_error('Timeout 5000ms exceeded waiting for "#login-9" at https://y.org/b')
    assert a == b == "timeout <n>ms exceeded waiting for <str> at <url>"


def test_error_patterns_top5_most_frequent_first():
    errors = {0: "Element 12 not found", 1: "Element 99 not found", 2: "HTTP 500", 3: "a", 4: "b", 5: "c", 6: "d"}
    t = run(["click[12]", "click[99]", "goto[x]", "x1", "x2", "x3", "x4"], errors=errors)
    pats = error_patterns(t)
    assert len(pats) == 5
    assert pats[0] == "click: element <n> not found"


@pytest.mark.parametrize("errors,status,expected", [
    ({0: "Please verify you are human (captcha)"}, None, FailureCategory.captcha_or_bot_wall),
    ({0: "Login required to view this page"}, None, FailureCategory.login_wall),
    ({0: "Element <div class=cookie-banner> intercepts pointer events"}, None, FailureCategory.consent_or_overlay),
    ({0: "net::ERR_NAME_NOT_RESOLVED"}, None, FailureCategory.navigation_error),
    ({0: "No element found for selector #buy"}, None, FailureCategory.element_not_found),
    ({0: "HTTP 503 Service Unavailable"}, None, FailureCategory.http_error),
    ({}, "limit", FailureCategory.step_limit),
    ({}, "error_max_turns", FailureCategory.step_limit),
    ({}, "timeout", FailureCategory.timeout),
])
def test_failure_categories_rules(errors, status, expected):
    t = run(["click[1]", "click[2]"], errors=errors, status=status)
    assert expected in failure_categories(t)


def test_loop_and_wrong_answer():
    looping = run(["click[5]"] * 4, urls={i: "https://a.com/p" for i in range(4)})
    assert FailureCategory.loop in failure_categories(looping)
    finished_wrong = run(["click[1]", "click[2]", "answer[42]"], status="finished")
    assert failure_categories(finished_wrong) == [FailureCategory.wrong_answer]
    progressing = run(["click[5]"] * 4, success=True, rewards={0: 0.1, 1: 0.2, 2: 0.3, 3: 0.4})
    assert failure_categories(progressing) == []


def test_hash_is_canonical_and_ignores_non_canonical_fields():
    a = run(["click[1]", "Type  \"x\""])
    b = run(["click[1]", "Type \"x\""])
    b.agent = "other agent"
    assert trajectory_hash(a) == trajectory_hash(b)
    c = run(["click[1]", "Type \"y\""])
    assert trajectory_hash(a) != trajectory_hash(c)
    assert len(trajectory_hash(a)) == 64


@pytest.mark.parametrize("name", DEV_FILES)
def test_condense_real_runs(name):
    for record in dev_records(name, 40):
        ep = condense(to_trajectory(record))
        sentences = [s for s in ep.summary.split(". ") if s]
        assert 3 <= len(sentences) <= 5, ep.summary
        assert ep.task[:20] in ep.summary or "[" in ep.task
        assert ep.domain and ep.domain in ep.embed_text
        assert ep.n_steps == len(record["steps"])
        assert ep.success is record["outcome"]["success"]
        assert ep.trust > 0
        if ep.success is False:
            assert ep.failure_categories, record["id"]
        assert ("succeeded" in ep.summary) == (ep.success is True)


def test_dataset_record_keeps_labels_as_tags():
    record = dev_records("online_mind2web_abp.jsonl", 1)[0]
    t = to_trajectory(record)
    assert t.source == "import"
    assert t.tags["dataset"] == "online_mind2web_abp"
    assert t.tags["task_family"].startswith("level:")
    assert t.tags["origin_id"] == record["id"]


@pytest.mark.parametrize("thought,label", [
    ("Action description: Clicking on the Popular Stories link with element_id [127] to see the list.", "Popular Stories"),
    ("Clicking the Comics section link with element_id [101] to return.", "Comics"),
    ("I click on the Continue shopping button [3] to go back.", "Continue shopping"),
    ("Clicking on the link with element_id [80] which seems to lead somewhere.", None),  # no name before the kind
    ("clicking on the first result link with element_id [9]", None),  # a description, not a capitalised name
])
def test_an_element_named_before_its_kind_in_the_thought_is_the_label(thought, label):
    desc = describe_action("click[127]", thought)
    assert desc == (f"click the element labeled '{label}'" if label else "click (an element on the page)")


@pytest.mark.parametrize("thought", ["Next I navigate to the REI websites main page to search.",
                                     "I will go to the top of the page."])
def test_a_place_the_thought_describes_is_not_taken_for_a_label(thought):
    """"navigate to the REI websites main page" names no visible element: said as "the ... page", never quoted
    ("You have clicked 'REI websites main' 3 times", "click 'top of the'")."""
    desc = describe_action("click[74]", thought)
    assert "labeled" not in desc and desc.endswith(" page")
