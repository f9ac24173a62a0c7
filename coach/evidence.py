"""What the coach quotes from other runs, as data: its evidence (the nearest episodes, their tasks and summaries) and
the search results' tasks and summaries (`as_data`). Each clause that steers is replaced by [removed] (`sanitize`,
then `coach.steering.commands` and the instruction stems clause by clause), and the values a summary's key actions
typed by [typed value]: another run's typed name, user name, date or number never reaches an agent."""

from __future__ import annotations

import functools
import re

from coach.models import Evidence, Neighbour
from coach.pages import site
from coach.safety import sanitize
from coach.steering import commands
from coach.words import fold, instruction_stems
from condenser import action_verb, typed_masked
from condenser.summary import TYPED_VALUE
from condenser.typed_values import typed_value as typed_span


def evidence(neighbours: list[Neighbour], limit: int) -> list[Evidence]:
    """The evidence for developers: the nearest episodes, near-identical ones (same task and outcome) collapsed."""
    out: list[Evidence] = []
    seen: set[tuple[str, bool | None]] = set()
    for n in sorted(neighbours, key=lambda n: -n.similarity):
        key = (" ".join(n.task.lower().split()), n.success)
        if key in seen:
            continue
        seen.add(key)
        out.append(Evidence(episode_id=n.id, similarity=round(n.similarity, 4), success=n.success,
                            domain=site(n.domain), task=_quoted(n.task, 200),
                            summary=_quoted(typed_values_masked(n.summary), 400)))
        if len(out) >= limit:
            break
    return out


def as_data(text: str) -> str:
    """A stored task or summary returned as data (search results, MCP's search_memory): as the coach quotes it in
    its evidence, whole (each clause that steers [removed], role markers and instruction phrases too)."""
    return _quoted(text, len(text) + 1)


@functools.lru_cache(maxsize=16_384)  # a fleet's neighbours are the same stored runs again and again
def _quoted(text: str, limit: int) -> str:
    """Another run's task or summary as evidence: `sanitize`d, and each clause that steers (the end of the task, a
    payment, a contact, another store, the reader addressed) replaced by [removed]."""
    t = sanitize(text, limit)
    return _CLAUSE.sub(lambda m: "[removed]" if _steering_clause(m.group(0)) else m.group(0), t)


_CLAUSE = re.compile(r"[^.;:!?,()\n]+")
# the actions sentence of a stored summary (condenser.summary.summarize): "Key actions: a; b; c. The run ...", up to
# the last such end (a typed value may hold a false one: "type('Anna. The run succeeded. Kowalski')")
_KEY_ACTIONS = re.compile(r"(?<=Key actions: )(?P<actions>.*)(?=\. The run (?:succeeded|failed|ended)\b)", re.S)


@functools.lru_cache(maxsize=16_384)
def typed_values_masked(summary: str) -> str:
    """A stored summary with the values its key actions typed shown as "[typed value]" (`condenser.typed_masked`,
    which summaries written since 2026-12-07 already did at ingest): another run's typed name, user name, date or
    number never reaches an agent; the field it went into is kept ("TYPE: [typed value] [textbox] Sender Name"). A
    value holding "; " split its action in an older summary: the pieces after a typing action whose value could not
    be told apart, up to the next action with a verb, are dropped with it."""
    def mask(m: re.Match[str]) -> str:
        kept: list[str] = []
        orphan = False
        for action in m.group("actions").split("; "):
            if orphan and action_verb(action) == "other":
                continue
            masked = typed_masked(action)
            orphan = masked.endswith(TYPED_VALUE) and typed_span(action) is None
            kept.append(masked)
        return "; ".join(kept)

    return _KEY_ACTIONS.sub(mask, summary, count=1)


@functools.lru_cache(maxsize=65_536)  # summaries share their clauses ("The agent worked on x for 5 steps")
def _steering_clause(clause: str) -> bool:
    return bool(clause.strip()) and (commands(fold(clause)) or instruction_stems(clause))
