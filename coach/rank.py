"""Evidence ranking: runs of the same task template first, then runs of the same site, then the rest.

The vector search finds a pool of candidates (task + site + opening actions embedded); this re-ranks the pool
by vector similarity + a bonus for the run's own registrable domain + a bonus for template similarity (the
task with its parameters masked), so "the same task with other dates or names" outranks "the same site".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from condenser import registrable_domain, template_similarity

T = TypeVar("T")
# bonus = TEMPLATE_WEIGHT x template similarity squared: a same-template run (similarity >= 0.6, bonus >= 0.54)
# outranks a run that only shares the site (boost 0.25), while loose word overlap (0.3 -> 0.14) barely moves
# anything. On the WebArena task list (pool 32) P@5 is 0.727 with this, 0.729 linear, 0.606 without (vector kNN).
TEMPLATE_WEIGHT = 1.5
POOL_FACTOR = 3
MIN_POOL = 24  # WebArena P@5 by pool: 12 -> 0.698, 16 -> 0.709, 24 -> 0.722, 32 -> 0.727; each 8 more rows ~0.5 ms


def pool_size(k: int) -> int:
    """How many candidates the vector search should return for a final top k."""
    return max(MIN_POOL, k * POOL_FACTOR)


def rank(task: str, domain: str | None, candidates: Sequence[T], *, key: Callable[[T], tuple[float, str, str | None]],
         domain_boost: float) -> list[T]:
    """`candidates` ordered by similarity + domain boost + TEMPLATE_WEIGHT x template similarity squared.

    `key(c)` gives (vector similarity, task text, domain) of a candidate.
    """
    own = registrable_domain(domain) if domain else None

    def score(c: T) -> float:
        sim, other_task, other_domain = key(c)
        same = own is not None and other_domain is not None and registrable_domain(other_domain) == own
        return sim + (domain_boost if same else 0.0) + TEMPLATE_WEIGHT * template_similarity(task, other_task) ** 2

    return sorted(candidates, key=lambda c: -score(c))
