"""The agent's notes say the task is complete, yet it acts on: what the run shows against that belief.

"End the run now" is said only when the run does not show otherwise. Said instead: the site's home page after
deeper pages (the page to go back to) or a home page the run never left; an address that lost the task's words a
step ago (a filter removed); an address that sets another zip code than the task's; an earlier page that held the
task's number; a level up; the task's words that neither the address nor the notes show. A repeat, a stall,
failing or empty actions are said inside the same sentence (one diagnosis); away from the task's site, the site is
named.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote_plus, urlsplit

from coach.acting import doing_words, step_target
from coach.models import PartialRun, Signal
from coach.notes import says_done
from coach.pages import brand_service, named_elsewhere, off_site, page, same_site, site, unloaded
from coach.walls import cart_page, cart_task, sign_in_page, walls
from coach.words import clean, fold
from condenser import action_verb, domain_of


def done(run: PartialRun, found: list[Signal]) -> Signal | None:
    """The agent's notes say the task is complete (two of the last three, the latest among them), yet it acts on
    the page instead of ending the run (117 of the 121 dev runs that did this failed). `found`: the run's other
    signals. What the run shows against the belief is said instead of "end the run now": steps that did nothing or
    failed (`_nothing_done`, `_errors` speak), the site's home page after its deeper pages, an address that lost
    the task's words a step ago (a filter removed)."""
    recent = run.steps[-3:]
    said = [says_done(s.thought) for s in recent]
    if len(recent) < 3 or sum(said) < 2 or not said[-1] or action_verb(recent[-1].action) == "answer":
        return None
    if unloaded(recent[-1].url):
        return None  # a tab that shows no page: what the run shows (`_nothing_done`) is said, not the belief
    where = page(recent[-1].url, run.domain)
    away = off_site(recent[-1].url, run.domain)
    away = named_elsewhere(recent[-1].url, away) if away and not brand_service(recent[-1].url, run.domain) else None
    own = site(run.domain)
    if away and own:  # the task's site is where the task is done: the belief is checked there, not here
        visited = any(s.url and not unloaded(s.url) and same_site(s.url, run.domain) and domain_of(s.url)
                      for s in run.steps)
        return Signal("done", 0.7, (
            f"Your own notes say the task is complete, but you are on {away} now, not on {own}: go back to {own}, "
            "check that its page shows everything the task asks for, and end the run only then." if visited else
            f"Your own notes say the task is complete, but this run has not opened {own} yet, the site your task is "
            f"on: it is not done on {away}. Open {own} (navigate to its address) and do it there."),
            {"notes": sum(said), "away": away, "visited": visited})
    name = away or (own if same_site(recent[-1].url or "", run.domain) else None)  # never "on ticketshop.com" for a site not named
    target = step_target(recent[-1], run.task)
    doing = f" ({doing_words(recent[-1].action, target)})" if target else ""
    did = f" (your last action: {doing[2:]}" if target else ""
    if where == "the home page" and own and (deeper := _deeper_page(run)):
        return Signal("done", 0.7,
                      f"Your own notes say the task is complete, but you are on {own}'s home page now{did}, not on a "
                      f"page that shows the result. Open the page that showed it again (you were at {deeper} before), "
                      "check it against every part of the task, and end the run only then.",
                      {"notes": sum(said), "home": True})
    if where == "the home page" and own and not _left_home(run):
        how_long = next((s for s in found if s.kind in {"repeat", "stall", "errors"} and s.facts.get("count")), None)
        count = f" ({str(how_long.facts['count'])[:1].lower()}{str(how_long.facts['count'])[1:]})" if how_long else ""
        return Signal("done", 0.7,
                      f"Your own notes say the task is complete, but you are still on {own}'s home page{count}, and "
                      "this run has opened none of its other pages: a home page seldom shows what a task asks for. "
                      "Open the page the task needs from here (the site's search or menu), and end the run only when "
                      "that page shows every part of the task.",
                      {"notes": sum(said), "home": True, "counted": bool(how_long)})
    if lost := _lost_words(run):
        return Signal("done", 0.7,
                      f"Your own notes say the task is complete, but your last action{doing} "
                      f"changed the page so that its address no longer holds {lost} from your task, as it did a step "
                      "before: a condition of the task (a filter, a sort, a place) may be gone. Check that the page "
                      "still applies every condition of the task before you end the run.",
                      {"notes": sum(said), "lost": True})
    if other := _other_code(run):
        theirs, ours = other
        return Signal("done", 0.7,
                      f"Your own notes say the task is complete, but the address{' at ' + where if where else ''} "
                      f"sets the zip or postal code {theirs}, where your task gives {ours}: the page shows results for "
                      f"another place. Set the location to {ours} on the page (its zip, location or delivery field), "
                      "check the results again, and end the run only then.",
                      {"notes": sum(said), "code": True})
    if held := _number_left(run):
        number, there = held
        return Signal("done", 0.7,
                      f"Your own notes say the task is complete, but the page you are on{' (' + where + ')' if where else ''}"
                      f" no longer holds {number} from your task in its address, as {there} did: what the task asks "
                      f"about that place or number may not be what this page shows. Go back to {there} if it showed "
                      "what the task asks for, check it against every part of the task, and end the run there.",
                      {"notes": sum(said), "left": True})
    if up := _went_up(run):
        narrower, wider = up
        return Signal("done", 0.7,
                      f"Your own notes say the task is complete, but your last action{doing} left {narrower} for "
                      f"{wider}, a page above it: what the narrower page showed (a category, a filter) is no longer "
                      f"applied. Go back to {narrower} if it showed what the task asks for, and end the run there.",
                      {"notes": sum(said), "up": True})
    # actions that did nothing or failed while it believes it is done: said as one diagnosis with the belief, whose
    # "if it does not, name what is still missing" is the way on (it may be on the goal page, idling; or not there)
    how_long = next((s for s in found if s.kind in {"repeat", "stall", "errors"} and s.facts.get("count")), None)
    said_count = str(how_long.facts["count"]) if how_long else ""
    count = f": {said_count[:1].lower()}{said_count[1:]}" if how_long else ""
    at = "" if how_long else (f" at {where}" if where else "") + did  # the count names the page and the action
    if unshown := _unshown(run):
        return Signal("done", 0.7,
                      f"Your own notes say the task is complete, yet you are still acting on {name or 'the page'}{at}"
                      f"{count}. Neither the page's address nor your notes show {unshown} from your task yet: check "
                      "the page for each of them, act for the one that is missing, and end the run (your stop or "
                      "answer action, with the answer) only when every part of the task is met.",
                      {"notes": sum(said), "counted": bool(how_long), "unshown": True})
    return Signal("done", 0.7,
                  f"Your own notes say the task is complete, yet you are still acting on {name or 'the page'}{at}"
                  f"{count}. If the page shows everything the task asks for, end the run now with your answer (your "
                  "stop or answer action); if it does not, name what is still missing and act only for that.",
                  {"notes": sum(said), "counted": bool(how_long)})


def _deeper_page(run: PartialRun) -> str | None:
    """The earlier page of the task's site, deeper than its home page and no wall, whose path holds the most of the
    task's words (the latest of those), in words; None when the run had none open."""
    wanted = {t.lower() for t in _TASK_TOKEN.findall(clean(run.task))}
    best, score = None, -1
    carts = cart_task(run.task)  # a cart or checkout page is a result only for a task that ends there or buys
    for s in run.steps[:-1]:
        where = page(s.url, run.domain)
        if not where or not where.startswith("/") or sign_in_page(s.url) or (cart_page(s.url) and not carts) or any(
                w.kind.startswith("wall:") for w in walls(PartialRun(task=run.task, domain=run.domain, steps=[s]))):
            continue
        try:  # its path's words, never its query's: a page can put any words in its query
            path = unquote_plus(urlsplit(s.url or "").path)
        except ValueError:
            continue
        held = len(wanted & {t.lower() for t in _TASK_TOKEN.findall(path)})
        if held >= score:
            best, score = where, held
    return best


_TASK_TOKEN = re.compile(r"[0-9]+(?:\.[0-9]+)?|[^\W\d_]{4,}")


def _went_up(run: PartialRun) -> tuple[str, str] | None:
    """The last action went from a page of the task's site to one above it (`/reviews/games/pc` to `/reviews`), both
    in words (`page`, every segment checked); None otherwise, or when either cannot be said."""
    if len(run.steps) < 2:
        return None
    before, last = run.steps[-2].url, run.steps[-1].url
    if not before or not last or not same_site(before, run.domain) or not same_site(last, run.domain):
        return None
    try:
        a, b = urlsplit(before).path.rstrip("/"), urlsplit(last).path.rstrip("/")
    except ValueError:
        return None
    if not b or not a.startswith(b + "/"):
        return None  # not an ancestor (the home page is said by the home page check)
    narrower, wider = page(before, run.domain), page(last, run.domain)
    if not narrower or not wider or not narrower.startswith("/") or not wider.startswith("/") or narrower == wider:
        return None
    return narrower, wider


def _held(query: str) -> set[str]:
    return {t.lower() for t in _TASK_TOKEN.findall(unquote_plus(query))}


def _lost_words(run: PartialRun) -> str | None:
    """The task's words and numbers that the address of the step before held and the last one's, on the same page of
    the task's site (the same path), no longer does ("'25' and '50'": a price filter removed), quoted; else None.
    Only the task's own words are said, never the address's."""
    if len(run.steps) < 2:
        return None
    before, last = run.steps[-2].url, run.steps[-1].url
    if not before or not last or before == last or not same_site(last, run.domain) or not same_site(before, run.domain):
        return None
    try:
        a, b = urlsplit(before), urlsplit(last)
    except ValueError:
        return None
    if a.path.rstrip("/") != b.path.rstrip("/") or a.netloc.lower() != b.netloc.lower():
        return None
    gone = _held(a.query) - _held(b.query)
    words = [t for t in dict.fromkeys(t.lower() for t in _TASK_TOKEN.findall(clean(run.task))) if t in gone][:3]
    if not words:
        return None
    quoted = [f"'{w}'" for w in words]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" and {quoted[-1]}"


# a zip or postal code the task gives ("zip code 90026", "postcode SW1A 1AA" is not read: digits only), and the
# query parameters that set one on a page (`zip=`, `postalCode=`, eBay's ship-to `_stpos=`)
_TASK_CODE = re.compile(r"(?i)\b(?:zip|postal|post)(?:\s*code)?\s*(?:of\s+|is\s+|:\s*)?(\d{4,6})\b")
_CODE_PARAM = re.compile(r"(?i)^(?:zip|zip_?code|postal|postal_?code|post_?code|plz|_?stpos)$")


def _other_code(run: PartialRun) -> tuple[str, str] | None:
    """The last address of the task's site sets a zip or postal code other than the one the task gives (`_stpos=20147`
    for "zip code 90026": the page's own guess of where the agent is): (the address's, the task's); else None."""
    last = run.steps[-1].url
    m = _TASK_CODE.search(clean(run.task)[:2000])
    if not m or not last or not same_site(last, run.domain):
        return None
    try:
        pairs = parse_qsl(urlsplit(last).query, keep_blank_values=False)
    except ValueError:
        return None
    ours = m.group(1)
    for name, value in pairs[:64]:
        value = value.strip()
        if _CODE_PARAM.match(name) and value.isdigit() and len(value) == len(ours) and value != ours:
            return value, ours
    return None


_NUMBER = re.compile(r"(?<![\w.])\d{3,}(?![\w.])")


def _number_left(run: PartialRun) -> tuple[str, str] | None:
    """A number of the task (a zip code, a model number: three digits or more) that an earlier address of the task's
    site held and the last one, another page of the site, does not: (the number quoted, that earlier page in
    words, the latest that held it); else None."""
    last = run.steps[-1].url
    if len(run.steps) < 3 or not last or not same_site(last, run.domain):
        return None
    numbers = list(dict.fromkeys(_NUMBER.findall(clean(run.task)[:2000])))[:8]
    if not numbers:
        return None
    try:
        now = unquote_plus(last[:4000])  # an address's head: a hostile one can be megabytes long
    except ValueError:
        return None
    missing = [n for n in numbers if n not in now]
    for s in reversed(run.steps[-20:-1]):
        if not s.url or not same_site(s.url, run.domain) or sign_in_page(s.url):
            continue
        digits = set(re.findall(r"\d+", unquote_plus(s.url[:4000])))
        held = [n for n in missing if n in digits]
        there = page(s.url, run.domain)
        if held and there and there.startswith("/") and there != page(last, run.domain):
            return f"'{held[0]}'", there
    return None


# words of a task that name no condition: its verbs, function words, the words every task has
_PLAIN = frozenset("""
about above after again against also among another anything around available based because been before being below
between both browse check choose could currently detail details does doing done down during each either else enough
every find finding first from further give given gives have having help here into item items just know learn least
less like list located look made make many might more most much must near nearest need needs only onto other others
ours over page please rather same search select shall should show showing shows since site some such sure take than
that their them then there these they thing things this those through under until upon using very view want wants
website what when where which while will with within without would your yours also able information info online
open task whose whom once along people option options kind kinds type types ones
""".split())
_CONDITION = re.compile(r"[^\W\d_][\w'-]{3,}", re.UNICODE)


def _unshown(run: PartialRun) -> str | None:
    """Up to three of the task's words (its conditions: "highest-rated", "quote", "weekend") that neither the last
    address nor the agent's last three notes hold, by their first five letters, quoted; None when all are shown or
    the task has no such word. The site's own name is no condition."""
    own = (site(run.domain) or "").split(".", 1)[0].lower()
    shown = fold(unquote_plus(run.steps[-1].url or "")[:2000]) + " " + " ".join(
        fold((s.thought or "")[:3000]) for s in run.steps[-3:])
    tokens = re.findall(r"[a-z0-9]{3,}", shown)
    stems = {w[:5] for w in tokens} | {w[:4] for w in tokens}  # "save" is shown by "saved", "rated" by "rated4"
    missing = []
    for word in dict.fromkeys(w.lower() for w in _CONDITION.findall(clean(run.task)[:600])):
        parts = [p for p in re.split(r"[-']", word) if len(p) >= 4 and p not in _PLAIN and p != own]
        if not parts or word in _PLAIN or any(fold(p)[:5] in stems for p in parts):
            continue
        missing.append(f"'{word}'")
        if len(missing) == 3:
            break
    if not missing:
        return None
    return missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + f" or {missing[-1]}"


def _left_home(run: PartialRun) -> bool:
    """Some step of the run ended on a page of the task's site other than its home page."""
    return any(s.url and same_site(s.url, run.domain) and (p := page(s.url, run.domain)) and p != "the home page"
               for s in run.steps)
