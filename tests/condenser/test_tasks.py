"""Task identity: one task written with and without its site at the end is one task."""

from __future__ import annotations

import pytest

from condenser import task_on_site


@pytest.mark.parametrize("a,b,domain", [
    ("Find parking with EV charging in Chicago in spothero", "Find parking with EV charging in Chicago.", "spothero.com"),
    ("Find all outdoor events this month in NYC in new.mta.info", "find all outdoor events this month in nyc",
     "new.mta.info"),
    ("Purchase the classic bundle in store.steampowered", "Purchase the classic bundle", "store.steampowered.com"),
    ("Confirm my VIP tour on the Six Flags website", "Confirm my VIP tour", "sixflags.com"),
    ("Show the BBC weather for London on bbc", "Show the BBC weather for London", "www.bbc.co.uk"),
])
def test_a_task_named_with_its_own_site_at_the_end_is_the_same_task(a, b, domain):
    assert task_on_site(a, domain) == task_on_site(b, domain)


@pytest.mark.parametrize("task,domain", [
    ("Find parking in Chicago", "spothero.com"),  # a place named last, not the site
    ("Book a table at Nobu in Malibu", "resy.com"),
    ("Compare prices on amazon", "ebay.com"),  # another site named last: a different task
])
def test_a_task_ending_in_another_name_keeps_it(task, domain):
    assert task_on_site(task, domain) == task.lower()
