"""Memory advice: what worked on the run's own site (a short plan in words) and where similar runs went wrong.

Only episodes of the run's own registrable domain are used: another site's steps name controls this page
does not have. Runs of the same task template come first. Every step passes `coach.steps.step_words`, so no
element id, coordinate, foreign typed value, answer or off-site address reaches the agent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from coach.align import match_point
from coach.models import Neighbour, PartialRun
from coach.pages import SEARCH_HOST, SEARCH_PAGE, brand_service, named_elsewhere, off_site, page, same_site, site
from coach.steps import ANY_ENTRY, step_label, step_words, typed_value
from coach.words import error_class, orders_when_joined
from condenser import SAME_TEMPLATE, action_verb, domain_of, normalize_task, registrable_domain, template_similarity

MAX_PLAN_STEPS = 4
MIN_MATCH = 0.45
URL_LOOKAHEAD = 6  # how far into a plan the run's addresses may show a step as done
# a click that closes a pop-up: that run met one there; the agent may not ("then click 'Got it'" on a page without it)
_DISMISS = re.compile(r"click '((?:got it|ok(?:ay)?|no,? thanks?|not now|maybe later|dismiss|close|skip|x|continue without"
                      r"(?: \w+)?|i understand|understood|accept(?: all)?(?: cookies)?|i agree|agree|reject all))'", re.I)


# steps that name no control or value of the page: a plan of nothing else says nothing
_GENERIC = frozenset({"type the value your task gives", "choose the option your task asks for",
                      "search with the words of your task", "scroll", "go back", "go forward"})


@dataclass(frozen=True)
class Plan:
    """The next steps of a successful run on the same site, in words."""

    steps: list[str]
    norms: list[str]
    episode_id: int
    same_template: bool
    same_task: bool = False  # the very task, not only its template
    site: str | None = None  # where the steps were done, when not on the task's site (the agent is there now)
    away: str | None = None  # the site the agent is on, when the steps were done on the task's site (open it first)
    url: str | None = None  # where that run took the first of these steps, when it recorded it


@dataclass(frozen=True)
class FailurePoint:
    """Where similar runs on the same site went wrong, in words."""

    words: str
    episode_id: int
    same_template: bool
    specific: bool = True  # a step that went wrong (False: only how the run ended)


def on_site(neighbours: list[Neighbour], domain: str | None) -> list[Neighbour]:
    """Neighbours of the run's own registrable domain."""
    if not domain:
        return []
    own = registrable_domain(domain)
    return [n for n in neighbours if n.domain and registrable_domain(n.domain) == own]


def _ranked(run: PartialRun, neighbours: list[Neighbour]) -> list[tuple[bool, float, Neighbour]]:
    out = []
    for n in neighbours:
        tsim = template_similarity(run.task, n.task)
        out.append((tsim >= SAME_TEMPLATE, n.similarity + tsim, n))
    return sorted(out, key=lambda x: (-x[0], -x[1], x[2].id))


def success_plan(run: PartialRun, neighbours: list[Neighbour], *, min_similarity: float) -> Plan | None:
    """The next 1-4 steps of the best-matching verified success on the run's site, from where the run stands."""
    own = [n for n in on_site(neighbours, run.domain) if n.success is True and n.verified and n.steps_brief]
    t = len(run.steps)
    here = elsewhere(run)
    if here and brand_service(run.steps[-1].url, run.domain):
        return None  # the brand's own shop or files: where the task's site sent it, not a site to take it back from
    chosen = _url_choices(run)  # read once: the same for every candidate
    just_done = _last_labels(run)
    for template, _, n in _ranked(run, own):
        if n.similarity < min_similarity and not template:
            continue
        j, score = match_point(run, n.steps_brief)
        if run.steps and score < MIN_MATCH:
            if not template:
                continue
            stood = _by_page(run, n.steps_brief)  # same template, no matching action: where that run stood here
            j = stood if stood is not None else min(t, len(n.steps_brief)) - 1  # ... or by position
        rest = n.steps_brief[j + 1:]
        mode = _where(rest[0], here, run.domain) if here and rest else None
        if here and (mode is None or (mode == "task" and not site(run.domain))):
            continue  # the agent is on another site, and where that run's next step happened is not known
        if mode == "here" and not SEARCH_HOST.fullmatch(domain_of(run.steps[-1].url) or ""):
            continue  # steps on another site than a search engine: a vouched run that typed a card on a lure's checkout
            # would have the agent do the same there
        if mode == "task":  # what the agent did elsewhere says nothing of where it stands on the task's site
            rest = n.steps_brief[_resume(run, n.steps_brief) + 1:]
        rest = rest[_shown(chosen, rest):]
        values = typed_values(n.steps_brief)
        steps, norms, first = [], [], None
        if mode == "task":  # that run was on the task's site at this point: the agent must get there first (again)
            back = any(st.url and same_site(st.url, run.domain) and domain_of(st.url) for st in run.steps)
            steps = [f"{'go back to' if back else 'open'} {site(run.domain)}"]
            norms = [f"navigate https://{site(run.domain)}"]
        for step in rest:
            if here and _where(step, here, run.domain) != mode:
                break  # only the steps on the one site they name
            words = step_words(step.get("action") or step.get("norm", ""), step.get("desc"), task=run.task,
                               domain=run.domain, url=step.get("url"), other_task=n.task, other_values=values)
            if step.get("norm", "").startswith("answer"):
                break
            if words is None and action_verb(step.get("action") or step.get("norm", "")) in {"type", "search", "select"}:
                break  # an entry that cannot be said: the steps after it would skip it ("click 'Find care'" unfilled)
            if words is None and (number := _NUMBER_CHOICE.match(step.get("action") or "")):
                if not template:
                    break  # another task's day or count: what to pick there, and all after it, is unknown
                # the same task's day ("May 7 to May 14": its '14'), else a day or count of the task's own
                said = same_task(run, n.task) and re.search(rf"(?<![\d:.,]){number.group(1)}(?![\d:])", run.task)
                words = f"click '{number.group(1)}'" if said else f"click {ANY_ENTRY}"
            if not template and words and words.endswith(ANY_ENTRY):
                break  # another task's choice: what the agent should pick there, and all after it, is unknown
            if words and (m := _DISMISS.fullmatch(words)):
                words = f"close the pop-up if one shows ('{m.group(1)}')"
            if not steps and just_done and _slug(step_label(step.get("action") or step.get("norm", ""),
                                                            step.get("desc")) or "") in just_done:
                continue  # what the agent's last actions just did ('Hair Loss ...' as a button, then as a link)
            if words and words not in steps and words not in {"scroll", "go back", "go forward"}:
                first = first or step.get("url")
                steps.append(words)
                norms.append(step.get("norm", ""))
            if len(steps) >= MAX_PLAN_STEPS:
                break
        if orders_when_joined(steps):
            continue  # labels that each passed alone and read as one order in a row: that run is no plan
        if steps and all(step in _GENERIC or step.startswith(("open ", "go back to ")) for step in steps):
            continue  # "type the value your task gives" alone (after opening the site) names nothing on the page
        if len(steps) > (mode == "task"):
            return Plan(steps, norms, n.id, template, template and same_task(run, n.task),
                        site=_shown_here(run, here) if mode == "here" else None,
                        away=named_elsewhere(run.steps[-1].url, here) if mode == "task" else None, url=first)
    return None


def _shown_here(run: PartialRun, here: str | None) -> str:
    """The other site the agent is on, as a plan's sentence opens with it: "On google.com, ...", else "On the site
    you are on, ..." (see `coach.pages.named_elsewhere`)."""
    name = named_elsewhere(run.steps[-1].url, here)
    return "the site you are on" if name == "another site" else name


def typed_values(brief: list[dict[str, Any]]) -> tuple[str, ...]:
    """What a stored run typed, searched or selected (its own parameters, as its task's are)."""
    return tuple(value for step in brief if action_verb(step.get("action") or "") in {"type", "search", "select"}
                 and (value := typed_value(step.get("action") or "")))


def _last_labels(run: PartialRun, last: int = 2) -> set[str]:
    """The labels (slugged) of the agent's own last actions: a plan does not open with one of them."""
    return {slug for s in run.steps[-last:]
            if action_verb(s.action) in {"click", "hover", "select"} and (slug := _slug(step_label(s.action, None) or ""))}
    # (a typed search term is no step done: typing 'Nobu' and then clicking the result 'Nobu' is the way)


def shown_by_url(run: PartialRun, steps: list[dict[str, Any]]) -> int:
    """How many of `steps` the run's own addresses on the task's site show as done: the plan goes on after the
    last step (among the first few) whose label is a path segment or a query value of a page the agent has been
    on ('Socks' at /kids/innerwear/socks, 'S' at ?prefn1=size&prefv1=S). An agent whose actions name no label
    (`click[146]`) is otherwise aligned by position alone, and was told to click what its address shows it did."""
    return _shown(_url_choices(run), steps)


def _url_choices(run: PartialRun) -> tuple[set[str], set[str]]:
    """The path segments and query values (slugged) of the run's own addresses on the task's site."""
    segments: set[str] = set()
    values: set[str] = set()
    for s in run.steps:
        if not s.url or not same_site(s.url, run.domain):
            continue
        try:
            parts = urlsplit(s.url)
            pairs = parse_qsl(parts.query)
        except ValueError:
            continue
        segments |= {_slug(unquote(p)) for p in parts.path.split("/")}
        values |= {_slug(v) for k, v in pairs if not _NOT_A_CHOICE.match(k)}
    return segments, values


def _shown(chosen: tuple[set[str], set[str]], steps: list[dict[str, Any]]) -> int:
    segments, values = chosen
    done = 0
    for i, step in enumerate(steps[:URL_LOOKAHEAD]):
        name = step_label(step.get("action") or step.get("norm", ""), step.get("desc"))
        slug = _slug(name or "")
        if slug and not slug.isdigit() and (slug in values or len(slug) > 1 and slug in segments):
            done = i + 1
    return done


# query keys that say where the agent came from or goes next, not what it chose (`?ref=checkout`, `?next=/cart`)
_NOT_A_CHOICE = re.compile(r"(?:ref|utm|src|source|from|origin|return|redirect|next|back|continue|url|goto|target"
                           r"|dest|callback|cb|came|prev|referr?er|tracking|trk|cid|campaign|fbclid|gclid)", re.I)


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "-", text.lower().removesuffix(".html").removesuffix(".htm")).strip("-")


def _resume(run: PartialRun, brief: list[dict[str, Any]]) -> int:
    """For an agent gone to another site: the index in `brief` matching its last step on the task's site, or -1
    (from the start) when it did nothing there that the successful run did."""
    k = max((i + 1 for i, s in enumerate(run.steps) if s.url and same_site(s.url, run.domain)), default=0)
    if not k:
        return -1
    j, score = match_point(run.model_copy(update={"steps": run.steps[:k]}), brief)
    return j if score >= MIN_MATCH else -1


_NO_PROGRESS = frozenset({"navigate", "none", "scroll", "wait", "back", "forward", "refresh"})


def _by_page(run: PartialRun, brief: list[dict[str, Any]]) -> int | None:
    """Where another run of the task stood on the agent's page: the index of its last step that ended there (a step's
    address is the page after it), or -1 on the site's home page it never returned to, or at all when its steps carry
    no addresses (runs open there: "click 'APPLY'" was said to an agent that had only opened the home page four
    times). None when the agent is on no page of the site, or on a deeper page that run's steps do not name (position
    decides)."""
    url = run.steps[-1].url if run.steps else None
    here = page(url, run.domain) if url else None
    if not here:
        return None
    if here == "the home page" and any(  # an action taken on a page of the site (the step before ended there)
            action_verb(s.action) not in _NO_PROGRESS and before.url and same_site(before.url, run.domain)
            for before, s in zip(run.steps, run.steps[1:], strict=False)):
        return None  # it acted on the home page (a page that keeps its address as forms fill): position decides
    if not any(step.get("url") for step in brief):  # a demonstration's steps (no addresses): it opened at the home
        if here != "the home page":  # page, so an agent there starts where it started, past its opening navigations
            return None
        j = -1
        while j + 1 < len(brief) and action_verb(brief[j + 1].get("action") or brief[j + 1].get("norm", "")) == "navigate":
            j += 1
        return j
    ended = [i for i, step in enumerate(brief) if page(step.get("url"), run.domain) == here]
    if ended:
        return ended[-1]
    return -1 if here == "the home page" else None


def _where(step: dict[str, Any], here: str, domain: str | None) -> str | None:
    """Where a remembered step happened, for an agent now on `here`: "here", on the task's site ("task": also a
    step with no URL, as the episode is of the task's site), or None (elsewhere)."""
    url = step.get("url")
    if not url:
        return "task"
    if not domain_of(url):
        return None
    return "here" if same_site(url, here) else "task" if same_site(url, domain) else None


def elsewhere(run: PartialRun) -> str | None:
    """The site the agent is on when it is not the task's own (from the last step's URL), else None."""
    return off_site(run.steps[-1].url if run.steps else None, run.domain)


_CATEGORY_WORDS = {
    "step_limit": "ran out of steps: go straight for the goal and use the site's search rather than browsing menus",
    "loop": "got stuck repeating the same actions: when an action does not change the page, switch approach at once",
    "wrong_answer": "ended with a wrong answer: check the result against every condition of the task before you "
                    "answer",
    "captcha_or_bot_wall": "were stopped by a captcha or bot check: if one appears, reach the page another way "
                           "instead of retrying",
    "login_wall": "were stopped by a sign-in page: prefer pages and flows that need no account",
    "consent_or_overlay": "were blocked by a cookie banner or pop-up: close it first",
    "timeout": "timed out waiting for pages: act on what is loaded instead of reloading",
}


_SEARCHED_OUT = ("ran out of steps: when a search does not find it, change the words once, then use the site's "
                 "filters, categories or menu instead of searching again")


_SEARCH_FIELD = re.compile(r"(?:\b|_)search", re.I)  # "TYPE: kayaks [searchbox] Search", "fill_search[35,x]"
_WEB_SEARCH = re.compile(r"\s*(?:google|bing|web)_?search\b", re.I)  # a search engine's, not the site's


# a recorded click on a bare number (`CLICK [span] 14`: a calendar's day, a count), whose label reads as an element id
_NUMBER_CHOICE = re.compile(r"(?i)^\s*click\s*\[[a-z]+\]\s*(\d{1,2})\s*$")


# a button that sends what was typed as a search ("TYPE: new york [input]", then "CLICK [button] Find")
_FIND_BUTTON = re.compile(r"(?i)^(?:search|find|go|find now|search now|find it|look ?up)$")


def _searched(run: PartialRun) -> bool:
    """The run used the site's own search already (typed into its search box, or into a field it then sent with
    Enter or a Search, Find or Go button, or reached a results page of the site): "use the site's search" would
    tell it what it did."""
    typed = -9
    for i, s in enumerate(run.steps):
        if s.url and SEARCH_PAGE.search(s.url) and (not run.domain or same_site(s.url, run.domain)):
            return True
        verb = action_verb(s.action)
        if verb in {"search", "type"} and _SEARCH_FIELD.search(s.action) and not _WEB_SEARCH.match(s.action):
            return True
        if verb == "type":
            typed = i
        elif i - typed <= 2 and (verb == "click" and _FIND_BUTTON.match(step_label(s.action, None) or "")
                                 or verb == "press" and re.search(r"(?i)\b(?:enter|return)\b", s.action)):
            return True  # typed, then sent: "Type 'paddling'", "Press ENTER"
    return False


def same_task(run: PartialRun, other_task: str) -> bool:
    """The other run had this very task (its text as the run's, up to case, spacing and final punctuation); runs
    of the same template with other parameters are "a task like yours"."""
    return normalize_task(run.task) == normalize_task(other_task)


def _who(run: PartialRun, n: Neighbour, template: bool) -> str:
    if not template:
        return "a similar run"
    return "a run of the same task" if same_task(run, n.task) else "a run of a task like yours"


def failure_point(run: PartialRun, neighbours: list[Neighbour], *, min_similarity: float) -> FailurePoint | None:
    """The step at which the closest failed run on the run's site went wrong (or how it ended), in words."""
    own = [n for n in on_site(neighbours, run.domain) if n.success is False]
    name = site(run.domain)
    if not name:
        return None
    doing: set[str] | None = None  # the agent's own last actions in words, read when first needed
    for template, _, n in _ranked(run, own):
        if n.similarity < min_similarity and not template:
            continue
        who = _who(run, n, template)
        # an unverified run (a writer's self-report) speaks in the fixed vocabulary only: how it ended, never its
        # labels or paths (what a writer stores must not reach another agent's words; the trust gate)
        brief = (n.steps_brief or []) if n.verified else []
        start = max(0, match_point(run, brief)[0]) if brief and run.steps else 0
        for step in brief[start:]:
            if not (step.get("failed") or step.get("norm") == "none"):
                continue
            words = step_words(step.get("action") or step.get("norm", ""), step.get("desc"), task=run.task,
                               domain=run.domain, url=step.get("url"), other_task=n.task,
                               other_values=typed_values(brief), specific=True)
            if not words:
                continue
            problem = error_class(step.get("error")) if step.get("error") else "an element that was not found"
            return FailurePoint(f"On {name}, {who} went wrong when it tried to {words}: it hit {problem}. Plan "
                                "another way for that step.", n.id, template)
        stuck = _stuck_on(brief, run, n.task)
        if stuck and doing is None:
            doing = _doing(run)
        if stuck and stuck not in (doing or set()):
            stuck = None  # where another run got stuck warns only an agent doing the same ("Directions" may be its way)
        ended = [c for c in n.failure_categories if c in _CATEGORY_WORDS]
        for category in ended:
            where = f" (it kept trying to {stuck})" if stuck and category in {"step_limit", "loop", "timeout"} else ""
            if not where and not _shows(category, run, n):
                continue  # the agent doing what that run got stuck on shows it; else the run must
            words = _CATEGORY_WORDS[category]
            if category == "step_limit" and (stuck and stuck.startswith(("search", "type", "fill")) or _searched(run)):
                words = _SEARCHED_OUT  # "use the site's search" to a run that searched until it ran out
            return FailurePoint(f"On {name}, {who}{where} {words}.", n.id, template, specific=bool(where))
        if ended:
            return None  # the closest failure's ending does not show in this run yet: a farther one's is no better
    return None


STEP_LIMIT_SHARE = 0.5  # "ran out of steps" speaks once the run has taken this share of the failed run's steps


def _shows(category: str, run: PartialRun, failed: Neighbour) -> bool:
    """Whether this run shows the start of how the failed run ended, so that saying it fits: running out of steps
    to a run that has taken half as many (at least 8), a loop to one that repeated an action in its last five
    steps. "Ran out of steps: use the site's search" at a run's third step, or after it searched, was a stock
    line that graders read as contradicting what the agent had just done right. A wall or a timeout is said as
    what to do if one appears."""
    if category == "step_limit":
        return len(run.steps) >= max(8, int(STEP_LIMIT_SHARE * failed.n_steps))
    if category == "loop":
        recent = [" ".join(s.action.lower().split()) for s in run.steps[-5:]]
        return len(set(recent)) < len(recent)
    return True


def _doing(run: PartialRun, last: int = 5) -> set[str]:
    """The agent's own last actions, in the words a remembered step is said in."""
    return {w for s in run.steps[-last:]
            if (w := step_words(s.action, None, task=run.task, domain=run.domain, url=s.url, specific=True))}


def _stuck_on(brief: list[dict[str, Any]], run: PartialRun, other_task: str) -> str | None:
    """The action a failed run repeated most (at least twice), in words: where it got stuck."""
    counts: dict[str, int] = {}
    first: dict[str, dict[str, Any]] = {}
    for step in brief:
        norm = step.get("norm", "")
        if not norm or norm in {"scroll", "wait", "none", "back"} or norm.startswith("answer"):
            continue
        counts[norm] = counts.get(norm, 0) + 1
        first.setdefault(norm, step)
    for norm, count in sorted(counts.items(), key=lambda kv: -kv[1]):
        if count < 2:
            break
        step = first[norm]
        words = step_words(step.get("action") or norm, step.get("desc"), task=run.task, domain=run.domain,
                           url=step.get("url"), other_task=other_task, other_values=typed_values(brief),
                           specific=True)
        if words:
            return words
    return None
