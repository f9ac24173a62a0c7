"""Next-action alignment: where a similar successful run stood at the current point, and what it did next."""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from coach.models import Neighbour, PartialRun
from condenser import normalize_action

_TOKEN = re.compile(r"[a-z0-9$]+")


@functools.lru_cache(maxsize=4096)
def _tokens(text: str) -> frozenset[str]:
    """Remembered: the run's last action is compared with every step of every neighbour (a long one was tokenized
    again for each: 8 neighbours of 500 steps against a 16k-character action took 12.7 s)."""
    return frozenset(_TOKEN.findall(text.lower()))


def action_similarity(a: str, b: str) -> float:
    """Similarity of two normalized actions: same verb, then token overlap of their targets."""
    va, _, ta = a.partition(" ")
    vb, _, tb = b.partition(" ")
    if va != vb:
        return 0.0
    sa, sb = _tokens(ta), _tokens(tb)
    if not sa and not sb:
        return 0.6
    return 0.4 + 0.6 * len(sa & sb) / len(sa | sb)


@dataclass(frozen=True)
class NextAction:
    norm: str
    description: str
    score: float
    episode_id: int
    domain: str | None


def match_point(run: PartialRun, brief: list[dict[str, Any]]) -> tuple[int, float]:
    """Index in `brief` that matches the run's last step (by action and url similarity, near the same
    position), and how well it matches. -1 means "before the first step"."""
    if not run.steps:
        return -1, 1.0
    last = run.steps[-1]
    last_norm = normalize_action(last.action)
    t = len(run.steps) - 1
    best, best_score = -1, 0.0
    for j, step in enumerate(brief):
        score = action_similarity(last_norm, step.get("norm", ""))
        if score == 0.0:
            continue
        if last.url and step.get("url") and last.url == step["url"]:
            score += 0.3
        score -= 0.03 * abs(j - t)
        if score > best_score:
            best, best_score = j, score
    return best, best_score


def next_action(run: PartialRun, neighbours: list[Neighbour], *, min_similarity: float,
                min_match: float = 0.45) -> NextAction | None:
    """The action similar successful runs took next at the matching point, voted by similarity x match.

    The description (verb + target text) is used, never an element id from another page.
    """
    votes: dict[str, float] = defaultdict(float)
    best: dict[str, NextAction] = {}
    recent = {normalize_action(s.action) for s in run.steps[-3:]}
    for n in neighbours:
        if n.success is not True or not n.verified or n.similarity < min_similarity or not n.steps_brief:
            continue
        j, score = match_point(run, n.steps_brief)
        if score < min_match or j + 1 >= len(n.steps_brief):
            continue
        step = n.steps_brief[j + 1]
        norm = step.get("norm", "")
        if not norm or norm in {"none", "scroll", "wait"} or (norm in recent and norm.partition(" ")[2] == ""):
            continue
        weight = n.similarity * score
        votes[norm] += weight
        if norm not in best or weight > best[norm].score:
            best[norm] = NextAction(norm, step.get("desc") or norm, weight, n.id, n.domain)
    if not votes:
        return None
    norm = max(votes, key=lambda k: (votes[k], k))
    return best[norm]
