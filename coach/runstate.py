"""What the run itself shows, with no memory: repeated actions, stalls, failing steps, notes that say it is done
or stuck, and the walls of `coach.walls`.

Each finding is a `Signal`: a kind, a confidence of its own, and a short message for the agent built only
from whitelisted fragments of the run (`coach.words`). Paging and scrolling that change the URL or the page
are progress, never a loop.
"""

from __future__ import annotations

import re

from coach.acting import GERUND, doing_words, step_target
from coach.away import left_site
from coach.done import done as believed_done
from coach.invented import invented
from coach.models import PartialRun, Signal
from coach.notes import says_progress, says_stuck
from coach.pages import SEARCH_PAGE, brand_service, located, named_elsewhere, off_site, page, same_site, site, unloaded
from coach.walls import walls
from coach.words import TAG_NAMES, clean, error_class
from condenser import Step, action_target, action_verb

_PAGING = re.compile(r"\b(?:next|previous|prev|more|older|newer|forward|later|earlier|page\s*\d+|load more|show more"
                     r"|see more|view more|month|week|year|day)\b|[›»>]{1,2}|^\s*\d+\s*$", re.I)

def _raw(step: Step) -> str:
    return " ".join(step.action.lower().split())


_COORDS = re.compile(r"\(\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*\)")
UNKNOWN_REPEATS = 4  # the same named action in a row when the run does not say whether the page changed
UNKNOWN_PAGING_REPEATS = 6  # paging, or an action naming no element (a tag only), in such a run
NEAR_PX = 40  # clicks this close are on the same control: an agent retrying a spot drifts by a few pixels


def _same(a: Step, b: Step) -> bool:
    """The same action: the same text, or clicks at points within NEAR_PX of each other with the same words
    around them ("click (1013, 36)", then "click (1006, 36)") that both failed or left the page as it was."""
    ra, rb = _raw(a), _raw(b)
    if ra == rb:
        return True
    ma, mb = _COORDS.search(ra), _COORDS.search(rb)
    if not (ma and mb) or _COORDS.sub("", ra) != _COORDS.sub("", rb):
        return False
    if not (a.failed and b.failed) and _changed(a, b) is not False:
        return False  # nearby clicks on a page that changed, or of a run that does not say: maybe progress
    return (abs(float(ma.group(1)) - float(mb.group(1))) <= NEAR_PX
            and abs(float(ma.group(2)) - float(mb.group(2))) <= NEAR_PX)


def _changed(a: Step, b: Step) -> bool | None:
    """Did the page change between two steps? None when the run does not say (no url, no observation)."""
    known = False
    if a.url and b.url:
        known = True
        if a.url != b.url:
            return True
    if a.observation and b.observation:
        known = True
        if clean(a.observation[:4000])[:2000] != clean(b.observation[:4000])[:2000]:
            return True
    if a.reward is not None and b.reward is not None:
        known = True
        if b.reward > a.reward:
            return True
    return False if known else None


def _unknown_need(step: Step, target: str | None, paging: bool) -> int:
    """How many repeats make a loop in a run that says nothing of its pages (no URL, no page text, no error).

    There the same words may be progress: a calendar's 'Next month', 'Add' on one item after another, or
    'CLICK [span]' on a different span each time (a tag names no element). Such runs need a longer streak."""
    if paging or not (target or re.search(r"\d", step.action)):
        return UNKNOWN_PAGING_REPEATS
    return UNKNOWN_REPEATS


def _notes_progress(steps: list[Step]) -> bool:
    """The notes of the last repeats differ from each other, most say new content came into view ("COVEN AHRI
    appeared", "I can see the fourth post") and none says the agent is stuck: a carousel or a list gone through."""
    notes = [clean((s.thought or "")[:2000]) for s in steps]
    return (len(set(notes)) == len(notes) and sum(says_progress(t) for t in notes) * 2 > len(notes)
            and not any(says_stuck(t) for t in notes))


def _verb_phrase(verb: str, n: int) -> str:
    past = {"click": "clicked", "type": "typed", "search": "searched for", "select": "selected", "navigate": "opened",
            "press": "pressed", "hover": "hovered over", "scroll": "scrolled", "back": "gone back", "drag": "dragged"}
    return f"{past.get(verb, 'repeated')}"


def _repeat(run: PartialRun) -> Signal | None:
    steps = run.steps
    if len(steps) < 3:
        return None
    streak = 1
    for s in reversed(steps[:-1]):
        if not _same(s, steps[-1]):
            break
        streak += 1
    verb = action_verb(steps[-1].action)
    tail = steps[-streak:]
    spread = 0  # the repeats are not in a row: how many steps they were found in
    if streak < 3:
        # the same action three times in the last five steps, nothing else changed
        recent = steps[-5:]
        same = [s for s in recent if _raw(s) == _raw(steps[-1])]
        if len(same) < 3 or verb in {"scroll", "wait", "back"}:
            return None
        first = next(i for i, s in enumerate(recent) if _raw(s) == _raw(steps[-1]))
        tail, spread = same, len(recent) - first  # the steps from the first repeat on
    changes = [_changed(a, b) for a, b in zip(tail, tail[1:], strict=False)]
    target = step_target(steps[-1], run.task)
    paging = bool(target and _PAGING.search(target)) or bool(_PAGING.search(action_target(steps[-1].action) or ""))
    if any(c is True for c in changes) and (paging or verb in {"scroll", "wait"}):
        return None  # paging or scrolling through changing pages: progress
    if verb in {"scroll", "wait"} and (streak < 6 if all(c is None for c in changes) else streak < 4):
        return None
    errors = [error_class(s.error) for s in tail if s.error]
    n = len(tail)
    where = page(steps[-1].url, run.domain)
    if verb == "none":  # an agent that logs `None` found no element to act on: nothing was done, n times
        return _nothing_done(run, n, where, spread)
    coords = re.search(r"\(\s*-?\d+(?:\.\d+)?\s*,\s*-?\d+", steps[-1].action)
    unknown = not errors and bool(changes) and all(c is None for c in changes)
    if unknown and n < _unknown_need(steps[-1], target, paging):
        return None  # a run that does not say whether the page changed: a few repeats may be progress
    if unknown and _notes_progress(tail[-3:]):
        return None  # ... and the agent's own notes say each step brought something new
    if unknown and verb == "scroll" and says_progress(steps[-1].thought):
        return None  # scrolling through a list its latest note says it sees ("I can see the third post ... let me
        # continue scrolling"): gathering, not stuck (two runs that did this succeeded; a grader read it as noise)
    tag = re.search(r"\[([A-Za-z]+)\]", steps[-1].action)
    kind = f"{tag.group(1).lower()} " if tag and tag.group(1).lower() in TAG_NAMES else ""  # a fixed vocabulary
    what = f"'{target}'" if target else ("at the same spot" if coords and verb == "click"
                                         else f"{kind}elements" if unknown else f"the same {kind}element")
    if verb in {"type", "search"}:
        what = "the same text" + (f" into '{target}'" if target and verb == "type" else "")
    if verb == "navigate" and not target:
        what = "the same address"  # "You have opened the same address 5 times", never "the same element"
    if verb in {"scroll", "back", "wait"}:
        what = ""
    elif verb not in {"click", "type", "search", "select", "navigate", "press", "hover", "drag"}:
        what = "the same action"  # a verb we do not know: "repeated the same action", never "the same element"
    sentence = f"You have {_verb_phrase(verb, n)} {what}".rstrip() + f" {n} times"
    other = _other_page(steps[-spread:], steps[-1], run.domain, where) if spread else None
    if other:  # A -> B -> A: a round trip, not a page that stayed the same
        sentence = (f"You have gone back and forth between {where} and {other} in your last {spread} steps, "
                    f"{GERUND.get(verb, 'repeating')} {what} {n} times on {where}".replace("  ", " "))
    elif spread:  # other steps came between the repeats: they may have changed the page, the repeats did not
        sentence += f" in your last {spread} steps"
    if other:
        pass  # both pages named already
    elif where:
        sentence += f" on {where}"
    elif off_site(steps[-1].url, run.domain):  # never the task's site when the agent is elsewhere
        sentence += f" on {named_elsewhere(steps[-1].url, off_site(steps[-1].url, run.domain))}"
    elif site(run.domain) and (not steps[-1].url or same_site(steps[-1].url, run.domain)):
        sentence += f" on {site(run.domain)}"
    if errors and len(errors) == n and len(set(errors)) == 1:
        sentence += f" and got {errors[0]} each time"
    elif all(c is False for c in changes) and changes and not other:  # the page text, or its address, stayed the same
        seen = all(a.observation and b.observation for a, b in zip(tail, tail[1:], strict=False))
        # the first of them led here from another page: the ones after it changed nothing
        moved = not spread and len(steps) > n and bool(steps[-n - 1].url) and steps[-n - 1].url != tail[0].url
        after = " after the first" if moved else ""
        sentence += (f" and the page did not change{after}" if seen else f" and the address did not change{after}") \
            if not spread else (" and each time ended on the same page" if seen else " and each time ended at the same address")
    count = sentence
    # a run that does not say whether the page changed: the same words may have acted on one item after another
    # (a builder's 'SELECT' on each part), so the remedy is said for the case the clicks brought nothing new
    doing = ". If these brought nothing new, doing it again will not help: " if unknown else ". Doing it again will not help: "
    gone = off_site(steps[-1].url, run.domain) and not brand_service(steps[-1].url, run.domain)
    sentence += doing + _remedy(verb, errors[-1] if errors else None, target, site(run.domain) if gone else None,
                                _on_results(run)) + "."
    confidence = min(0.95, 0.55 + 0.1 * n + (0.1 if errors else 0.0))
    return Signal("repeat", round(confidence, 2), sentence,
                  {"action": verb, "target": target, "times": n, "page": where, "error": errors[-1] if errors else None,
                   "count": count})


def _other_page(recent: list[Step], last: Step, domain: str | None, where: str | None) -> str | None:
    """The one other page of the site (in words) that every step between the repeats was on, when the repeats were
    all on `where`: the agent goes back and forth between the two. None otherwise."""
    same = [s for s in recent if _raw(s) == _raw(last)]
    between = [s for s in recent if _raw(s) != _raw(last)]
    if not where or not between or any(page(s.url, domain) != where for s in same):
        return None
    pages = {page(s.url, domain) for s in between}
    other = pages.pop() if len(pages) == 1 else None
    return other if other and other != where and other.startswith("/") else None


def _nothing_done(run: PartialRun, n: int, where: str | None, spread: int = 0) -> Signal:
    """Steps that found no element to act on (`None`): on a blank tab the site was never opened. `spread`: the `n`
    were found among that many last steps, not in a row ("3 of your last 4 actions")."""
    name = site(run.domain)
    last_n = f"{n} of your last {spread} actions" if spread > n else f"your last {n} actions"
    your_last = last_n[:1].upper() + last_n[1:]
    before = next((s.url for s in reversed(run.steps[:-n]) if s.url and not unloaded(s.url)), None)
    opened = page(before, run.domain) if before else None  # the site's page the run had open before the blank tab
    if unloaded(run.steps[-1].url) and opened and name:
        at = "" if opened == "the home page" else f" at {opened}"
        sentence = (f"{your_last} found no element to act on, and the tab shows no page now, though {name} "
                    f"was open before{at}. Open that page again (navigate to its address), then act on what it shows.")
    elif unloaded(run.steps[-1].url):
        sentence = (f"{your_last} found no element to act on, and the tab shows no page: "
                    + (f"{name} was never opened. Open {name} first (navigate to its address), then act on what "
                       "it shows." if name else "no site was opened. Navigate to the site your task names first, "
                       "then act on what it shows."))
    else:
        sentence = (f"{your_last}{' on ' + where if where else ''} found no element to act on, so nothing "
                    "was done. The element you mean is not on this page as you describe it: look at what the page "
                    "shows now, scroll to it or find it by its visible text, or use "
                    + (_ON_RESULTS if _on_results(run) else "the site's search") + ".")
    count = f"{your_last}{' on ' + where if where else ''} found no element to act on"
    return Signal("repeat", round(min(0.95, 0.55 + 0.1 * n), 2), sentence,
                  {"action": "none", "target": None, "times": n, "page": where, "error": None, "count": count})


# a control that sends a form: clicked again and again with nothing happening, the form is missing an entry
_SUBMIT = re.compile(r"(?i)^(?:search(?: \w+){0,2}|submit(?: \w+)?|go|find(?: \w+){0,2}|continue|next|apply(?: \w+)?"
                     r"|confirm|done|save|update|show results|see results|view results|sign in|log ?in|book now"
                     r"|check availability|get quotes?|calculate|send)$")


def _on_results(run: PartialRun) -> bool:
    """The agent is on a results page of the task's site's own search: "use the site's search" would tell it what it
    did; the results' own filters and sort, or other words, are the way round there."""
    url = run.steps[-1].url if run.steps else None
    return bool(url) and same_site(url or "", run.domain) and bool(SEARCH_PAGE.search(url or ""))


_ON_RESULTS = "this results page's filters or sort, or a search with other words"


def _remedy(verb: str, error: str | None, target: str | None = None, away: str | None = None,
            results: bool = False) -> str:
    if error in {"an element that was not found", "an element that is not visible", "an element that no longer exists"}:
        return ("the element is not where you expect; scroll to it or find it by its visible text, use "
                + (_ON_RESULTS if results else "the site's search") + ", or go back one page")
    if error == "another element covering the target":
        return "something covers it (a banner, pop-up or dialog); close or accept that first"
    if error == "a disabled element":
        return "it stays disabled until a required choice is made; fill in or select the missing option first"
    if error == "a timeout":
        return "wait for the page to finish loading once, then act on what it shows"
    if verb in {"type", "search"}:
        return ("check whether the field already holds the text, then submit it (press Enter or click the search or "
                "submit button) instead of typing again")
    if verb == "navigate":
        return "the address does not lead where you need; reach the page through the site's menu or search instead"
    if away and verb == "click":  # "the site's search" on google.com is the search box it keeps using
        return f"this page is not on {away}, the site your task is on; open {away} (navigate to its address) instead"
    if verb == "click" and target and _SUBMIT.match(target):
        return ("the form it sends is likely missing an entry (a field left empty or an option not chosen); fill in "
                "what your task gives, look for a message next to the fields, then click it once")
    if verb == "scroll":
        return ("if what you need has not appeared after these scrolls, use "
                + (_ON_RESULTS if results else "the site's search, filters or menu") + " instead of scrolling further")
    return ("pick a different element (another link or button), or reach the goal another way, e.g. "
            + (_ON_RESULTS if results else "the site's search"))


def _stall(run: PartialRun) -> Signal | None:
    steps = run.steps
    if len(steps) < 6 or not steps[-1].url:
        return None
    n = 1
    for a, b in zip(reversed(steps[:-1]), reversed(steps[1:]), strict=False):
        if a.url != b.url:
            break
        n += 1
    if n < 6:
        return None
    tail = steps[-n:]
    failed = sum(1 for s in tail if s.failed or action_verb(s.action) == "none")
    if failed < 2 and not any(says_stuck(s.thought) for s in tail[-3:]):
        return None
    where = page(steps[-1].url, run.domain) or "the same page"
    target = step_target(steps[-1], run.task)
    last = f" (your last action: {doing_words(steps[-1].action, target)})" if target else ""
    failures = f", and {failed} of those actions failed" if failed else ""
    count = f"You have been on {where} for the last {n} steps{last} without reaching a new page{failures}"
    varied = len({s.action.strip().lower() for s in tail}) >= len(tail) - 1  # a different control each step
    ways = (_ON_RESULTS, f"{_ON_RESULTS}, or a different link") if _on_results(run) else (
        "the site's search or menu", "the site's search, menu or a different link")
    remedy = ("Step back: check what the task still needs on this page (a field or choice left empty, a required "
              f"option) and submit it, or look for another way to the goal ({ways[0]})." if varied else
              f"Step back: look for another way to the goal ({ways[1]}) rather than the same control.")
    return Signal("stall", round(min(0.85, 0.5 + 0.05 * n + 0.05 * failed), 2), f"{count}. {remedy}",
                  {"page": where, "steps": n, "failed": failed, "count": count})


def _errors(run: PartialRun) -> Signal | None:
    recent = run.steps[-3:]
    failed = [s for s in recent if s.error or (s.reward is not None and s.reward < 0) or action_verb(s.action) == "none"]
    if len(failed) < 2 or not (run.steps[-1].error or action_verb(run.steps[-1].action) == "none"):
        return None
    if not any(s.error for s in failed) and (unloaded(run.steps[-1].url) or not run.steps[-1].url):
        return None  # steps that found nothing on a tab with no page, and no error said: `_nothing_done` says it
    classes = [error_class(s.error) if s.error else "an element that was not found" for s in failed]
    main = classes[-1]
    verb = action_verb(run.steps[-1].action)
    results = _on_results(run)
    share = f"Your last {len(recent)} actions" if len(failed) == len(recent) else \
        f"{len(failed)} of your last {len(recent)} actions"
    return Signal("errors", round(0.5 + 0.1 * len(failed), 2),
                  f"{share} failed, the last with {main}. Change approach: {_remedy(verb, main, results=results)}.",
                  {"failed": len(failed), "error": main, "remedy": _remedy(verb, main, results=results),
                   "count": f"{share} failed, the last with {main}"})


def _struggle(run: PartialRun) -> Signal | None:
    recent = run.steps[-3:]
    said = [says_stuck(s.thought) for s in recent]
    hits = sum(said)
    if len(recent) < 3 or hits < 2 or not said[-1]:  # the latest note has moved on ("I can see results"): so has it
        return None
    where = located(run.steps[-1].url, run.domain) or (f" on {at}" if (at := page(run.steps[-1].url, run.domain)) else "")
    target = step_target(run.steps[-1], run.task)
    did = f" (your last action: {doing_words(run.steps[-1].action, target)})" if target else ""
    return Signal("struggle", 0.55,
                  f"Your own notes say the last steps{did}{where} are not working. Stop and "
                  "re-plan: re-read the task, then reach the goal by another route ("
                  + (_ON_RESULTS if _on_results(run) else "the site's search, menu or filters")
                  + ") instead of retrying the same control.", {"notes": hits})


def run_signals(run: PartialRun) -> list[Signal]:
    """Everything the run itself shows, strongest first."""
    found = [s for s in (_repeat(run), _errors(run), _stall(run), _struggle(run), invented(run)) if s is not None]
    found += walls(run)
    away = left_site(run)
    if away is not None:  # where it is says what to do; what it repeated there only how long
        found = [away] + [Signal(s.kind, s.confidence, f"{s.facts['count']}.", s.facts) if s.kind == "repeat"
                          else s for s in found if s.kind not in {"stall", "errors", "struggle"}]
    walled = any(s.kind.startswith("wall:") and s.kind != "wall:empty_results" for s in found)
    done = None if walled else believed_done(run, found)  # a page in the way is a fact; the agent's "done" there a belief
    if done is not None:  # why it goes round: it believes it is finished; the rest only counts how long (in its words)
        how_long = next((s for s in found if s.kind in {"repeat", "stall", "errors"} and s.facts.get("count")), None)
        if how_long is not None and not done.facts.get("counted"):
            return [done, Signal(how_long.kind, how_long.confidence, f"{how_long.facts['count']}.", how_long.facts)]
        return [done] + ([Signal(how_long.kind, how_long.confidence, "", how_long.facts)] if how_long else [])
    kinds = {s.kind for s in found}
    # one remedy per message: each later rule keeps the signal that says what to do and folds the others into it
    if "repeat" in kinds:  # the repeat message already names the errors and the page
        found = [s for s in found if s.kind not in {"errors", "stall"}]
    if len(found) > 1:  # "your own notes say ... not working" only when nothing else says why and what to do
        found = [s for s in found if s.kind != "struggle"]
    kinds = {s.kind for s in found}
    if {"stall", "errors"} <= kinds:  # the stall counts the failures; the errors' remedy is the specific one
        stall, errors = (next(s for s in found if s.kind == k) for k in ("stall", "errors"))
        said = Signal("stall", max(stall.confidence, errors.confidence),
                      f"{stall.facts['count']}, the last with {errors.facts['error']}. Change approach: "
                      f"{errors.facts['remedy']}.", {**stall.facts, "error": errors.facts["error"]})
        found = [said] + [s for s in found if s.kind not in {"stall", "errors"}]
    found = sorted(found, key=lambda s: -s.confidence)
    wall = next((s for s in found if s.kind.startswith("wall:") and s.kind != "wall:empty_results"), None)
    counted = next((s for s in found if s.kind in {"repeat", "stall"} and s.facts.get("count")), None)
    if wall is not None and counted is not None:  # the wall says why and what to do; the rest only how long
        ending = ": doing it again will not get past it." if counted.kind == "repeat" else "."
        said = Signal(counted.kind, counted.confidence, f"{counted.facts['count']}{ending}", counted.facts)
        found = [wall, said] + [s for s in found if s is not wall and s is not counted]
    elif away is not None:
        found = [away] + [s for s in found if s is not away]
    return found
