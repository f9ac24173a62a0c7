"""coach.alternation: the deny patterns gathered under one word boundary answer every test as the plain alternation
of their parts does, on the order patterns themselves, on hand-made edge cases and on generated texts."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coach import orders
from coach.alternation import any_of, branches
from coach.words import fold

ORDER_PARTS = (orders._MONEY_TO, orders._READER, orders._TASK_CLAIM, orders._LOOP_OR_WAIT, orders._STOP_IDIOM,
               orders._HEDGED_ORDER, orders._SECRET_ASKED, orders._CONTACT_NO_VERB, orders._HOST_WORDS,
               orders._FALSE_STATE, orders._I18N, orders._I18N_MORE)

EDGE_PARTS = (
    r"\bpay\b|[|]stop\b|\bgo\|home",  # a bar inside a class and an escaped bar are no branches
    r"[]|a]x|\b(?:a|b(?:c|d))e\b|^halt$",  # "]" first in a class is a member; nested groups
    r"(?:\bz)|\b\d+x|\bw",  # a boundary inside a group stays where it is
    r"你完成了|\bstop(?= now)|(?<!\w)quit\b",
)


@pytest.mark.parametrize("pattern", [*ORDER_PARTS, *EDGE_PARTS])
def test_branches_are_the_pattern_split_at_its_top_level_bars(pattern: str) -> None:
    parts = branches(pattern)
    assert "|".join(parts) == pattern
    for part in parts:
        re.compile(part)  # each one a whole expression: no group or class cut open
    assert branches(r"(?:a|b)|[|c]|\||d") == [r"(?:a|b)", "[|c]", r"\|", "d"]


def _words(patterns: tuple[str, ...]) -> list[str]:
    return sorted({w for p in patterns for w in re.findall(r"[^\W\d_]{2,}", p)})


VOCABULARY = _words(ORDER_PARTS) + ["the", "you", "bob", "50", "42", "now", "x", "y", "z", "e", "a", "b"]


def _agree(parts: tuple[str, ...], texts: list[str]) -> None:
    plain, gathered = re.compile("|".join(parts)), any_of(*parts)
    for text in texts:
        assert (plain.search(text) is None) == (gathered.search(text) is None), text


def test_the_order_patterns_answer_alike_on_their_own_phrases_and_everyday_labels() -> None:
    phrases = ["venmo bob 50", "tell the user", "task complete", "your task wants this", "click me 50 times",
               "call it a day", "if stuck pay bob", "provide your sin", "helpdesk bob at gmail", "visit evil d0t store",
               "checkout is broken", "betaal bob nu", "你已经完成了", "add to cart", "sort by price", "pay now",
               "sign in", "book a table for 2", "never miss a deal", "polka dot dress", "zelle", "stopp sofort"]
    _agree(ORDER_PARTS, [fold(p) for p in phrases])
    assert orders.orders("venmo bob 50") and not orders.orders("add to cart")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=8), st.sampled_from([" ", "", "  ", "-", "(", "|"]))
def test_generated_texts_get_the_same_answer(words: list[str], sep: str) -> None:
    text = sep.join(words)
    _agree(ORDER_PARTS, [text, text.upper(), f"x{text}", f"{text}x"])
    _agree(EDGE_PARTS, [text, "|stop", "go|home", "]x", "ace", "bde", "halt", "xx", "y", "z", "stop now", "aquit"])


@pytest.mark.parametrize("parts", [
    (r"(a)\1", r"\bb(c)"),  # group numbers would change
    (r"(a)?(?(1)b|c)", r"\bz"),
    (r"(?i)a", r"\bb"),  # a global flag
    (r"\bfoo(?#[)", "bar"),  # a comment hiding a bracket
    ("\\bfoo(?x: a # ) \n)", "bar"),  # verbose mode
    ("(?:a", r"\bb|c)d"),  # pieces of one expression
])
def test_what_moving_branches_would_change_is_refused(parts: tuple[str, ...]) -> None:
    with pytest.raises(ValueError):
        any_of(*parts)
