"""The advice checks of the evaluation, on messages written by hand."""

from __future__ import annotations

import pytest

from coach import PartialRun
from ems_service.evaluation.advice import foreign_details, grounded

RUN = PartialRun(task="Find a receipt for eTicket 123 on united", domain="united.com", steps=[
    {"action": "search('receipt 123')", "url": "https://www.google.com/search?q=receipt"},
    {"action": "click('Where can I get my receipt?')", "url": "https://faq-en.jal.co.jp/app/answers/26979"}])


@pytest.mark.parametrize("text, foreign", [
    ("You are on jal.co.jp, but a successful run did it on united.com: open united.com.", False),  # both the run's
    ("You have searched for the same text 3 times on google.com.", False),  # the run was there
    ("A successful run did it on delta.com: open delta.com.", True),  # neither the task's nor visited
    ("Click [61] next.", True),
    ("Click 'MY TRIPS', then 'Find a receipt'.", False),
])
def test_a_host_is_foreign_only_when_the_run_was_never_there(text, foreign):
    assert foreign_details(text, RUN, [], {}) is foreign


def test_a_message_naming_a_site_the_run_was_on_is_grounded():
    assert grounded("Your own notes say the task is complete, yet you are still acting on jal.co.jp.", RUN)
    assert not grounded("Your own notes say the task is complete, yet you are still acting on delta.com.", RUN)


def test_the_eval_sees_a_wall_in_the_address_path_and_page_never_in_the_query():
    from ems_service.evaluation.advice import wall_in_view

    def at(url: str, observation: str = "") -> PartialRun:
        return PartialRun.model_validate({"task": "Find a person", "steps": [{"action": "click[1]", "url": url,
                                                                              "observation": observation}]})

    assert wall_in_view(at("https://yp.com/lookup?g-recaptcha-response=&phone=123")) is None
    assert wall_in_view(at("https://yp.com/errors/validateCaptcha?x=1")) == "captcha"
    assert wall_in_view(at("https://yp.com/lookup", "Are you a robot?")) == "captcha"
