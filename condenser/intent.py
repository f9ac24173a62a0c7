"""Intent of a task (a small closed set) by keywords, so `intent=buy` matches "Buy the blue kettle"."""

from __future__ import annotations

import re

INTENTS = ["checkout", "buy", "book", "login", "fill_form", "download", "compare", "monitor", "search", "extract",
           "read", "other"]

# Checked in order: the first intent with a keyword in the text wins (specific before generic).
_KEYWORDS: list[tuple[str, list[str]]] = [
    ("checkout", ["checkout", "check out", "place the order", "place an order", "pay for", "complete the purchase"]),
    ("buy", ["buy", "purchase", "add to cart", "add to my cart", "add to the cart", "to cart", "order a", "order the",
             "shop for", "subscribe"]),
    ("book", ["book", "reserve", "reservation", "schedule an appointment", "rent a", "rent an", "hotel room",
              "table for", "tickets for", "flight"]),
    ("login", ["log in", "login", "sign in", "signin", "sign up", "register an account", "create an account"]),
    ("fill_form", ["fill", "form", "submit", "apply for", "register for", "enter my", "sign the petition"]),
    ("download", ["download", "export", "save the pdf", "get the pdf"]),
    ("compare", ["compare", "comparison", " vs ", "versus", "cheapest", "difference between", "best rated"]),
    ("monitor", ["track", "monitor", "status of", "alert", "notify", "watch for"]),
    ("search", ["search", "find", "look for", "look up", "locate", "browse", "show me", "show", "list", "filter"]),
    ("extract", ["what is", "what are", "how many", "how much", "get the", "tell me", "extract", "check the",
                 "which", "who is", "when is"]),
    ("read", ["read", "open the article", "view", "see the", "news", "review"]),
]
# one pattern per intent, keywords as whole words (the first keyword of the first intent that matches wins)
_PATTERNS = [(intent, re.compile(r"(?<!\w)(?:" + "|".join(re.escape(k.strip()) for k in keys) + r")(?!\w)"))
             for intent, keys in _KEYWORDS]
_PUNCTUATION = re.compile(r"[^\w\s']")


def classify_intent(text: str | None) -> str:
    """The intent of a task or an intent word (`buy`, `book`, ...); `other` when nothing matches."""
    if not text:
        return "other"
    low = " " + " ".join(_PUNCTUATION.sub(" ", text.lower()).split()) + " "
    word = low.strip()
    if word in INTENTS:
        return word
    return next((intent for intent, pattern in _PATTERNS if pattern.search(low)), "other")
