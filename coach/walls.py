"""Walls: pages that stand between the agent and its task (a cookie dialog, a sign-in page, a captcha, a page
that does not exist, a refusal, the browser's own error page, a search with no results), recognised from the
address, the page text, the error and the agent's own notes, each with its remedy in the coach's words.

An address names a wall by its scheme, host, path and fragment, never by its query (`_url_shows`).
"""

from __future__ import annotations

import re

from coach.models import PartialRun, Signal
from coach.notes import STUCK
from coach.pages import SEARCH_HOST, brand_service, located, page, same_site, site, unloaded
from coach.words import clean
from condenser import Step, action_verb, domain_of

# what a page asks only when it is a bot check, anywhere in its text; "Are you a robot?" or "not a robot" may be
# quoted by a review or an article deep in a page that works: those count near the page's top or on a short page
_CAPTCHA_ASKS = r"i'?m not a robot|not a robot|are you a (?:robot|human)"
_CAPTCHA_SHORT = 1500  # a bot check's page is short; the lines of a page that works run on
_CAPTCHA_TOP = 600
_CAPTCHA_PAGE = (
    r"(?:solve|complete|enter|type|fill in|answer) the (?:captcha|characters|code (?:you see|shown|above|below)|puzzle)"
    r"|captcha (?:required|verification|challenge|check)|" + _CAPTCHA_ASKS +
    r"|verify (?:that )?you are (?:a )?human|unusual traffic|bot (?:check|detection)|press (?:and|&) hold"
    r"|just a moment\W{0,3}\s*(?:$|\W)|checking (?:if the site connection is secure|your browser)|verifying you are"
    r" human|attention required|ddos protection by")
_NOT_FOUND_PAGE = (r"\b404\s*(?:[-:|]\s*)?(?:error|not found|page not found)|\berror\s*:?\s*404\b|^\s*404\s*$"
                   r"|page (?:not found|does not exist|cannot be found|isn't available)|this page (?:doesn't|does not) exist")

_REFUSED_PAGE = (r"\baccess (?:denied|to this page has been denied)|\b403 forbidden|you don't have permission to access"
                 r"|you do not have (?:permission|access)|this site can(?:no|')t be reached|refused to connect"
                 r"|err_(?:connection|name|address|blocked|http2|ssl|tunnel)")

# Each wall: its address ("url"), its page's text ("text") and, where they say more, the agent's own notes ("words")
WALLS: dict[str, dict[str, re.Pattern[str]]] = {
    "consent": {
        "url": re.compile(r"(?:^|[./])consent\.|/consent|cookie-?(?:policy|consent|settings)|gdpr", re.I),
        "text": re.compile(r"accept (?:all )?cookies|we use cookies|cookie (?:settings|preferences|banner|consent|notice)"
                           r"|manage (?:consent|cookies)|consent (?:dialog|banner|popup|form)|before you continue to"
                           r"|reject all|cookie wall", re.I),
    },
    "login": {
        "url": re.compile(r"/(?:log-?in|sign-?in|signin|ap/signin|auth(?:enticate)?|account/login|sso|session/new)"
                          r"(?:[/?#.]|$)", re.I),
        "text": re.compile(r"sign in to continue|please (?:log|sign) ?in|log ?in required|sign ?in required"
                           r"|you must (?:be )?(?:log|sign)(?:ged)? ?in|login wall|requires? (?:a )?(?:login|sign ?in|account)"
                           r"|enter your password", re.I),
    },
    "captcha": {
        "url": re.compile(r"captcha|/challenge|/sorry/|validatecaptcha|cdn-cgi/challenge|are-?you-?(?:a-?)?human"
                          r"|human-?verification|/bot-?(?:check|detection)|perimeterx|datadome|/distil_|/blockpage", re.I),
        # a page's text names a captcha when it asks for one: a footer's "protected by reCAPTCHA", "Performance &
        # security by Cloudflare" or a review's "no captcha nonsense" is on pages that work
        "text": re.compile(_CAPTCHA_PAGE, re.I),  # a weak phrase alone: near the top or on a short page (`_asks`)
        "words": re.compile(_CAPTCHA_PAGE + r"|captcha|cloudflare|security check", re.I),  # the agent's notes
    },
    "not_found": {
        "url": re.compile(r"/404(?:[/?#.]|$)|/not-?found|/error(?:[/?#.]|$)", re.I),
        "text": re.compile(_NOT_FOUND_PAGE, re.I | re.M),  # "404 bus stops" is no missing page; "404 Not Found" is
        "words": re.compile(_NOT_FOUND_PAGE + r"|\b404\b", re.I | re.M),
    },
    "blocked": {
        "url": re.compile(r"^(?:chrome-error|about:neterror)|/(?:access-?denied|forbidden|blocked)(?:[/?#.]|$)", re.I),
        "text": re.compile(_REFUSED_PAGE + r"|sorry, you have been blocked", re.I),  # Cloudflare's; "I have been
        # blocked" is a review's. In the agent's words a block page is said more ways ("we are blocked from ...")
        "words": re.compile(_REFUSED_PAGE + r"|you(?: have|'ve) been blocked|\b(?:we|i|you)(?: have|'ve| are|'re| am|'m"
                            r"| were| was) (?:been )?blocked from|access (?:to [\w ]{1,40})?(?:has been|was|is) (?:blocked"
                            r"|denied)", re.I),
    },
    "empty_results": {
        "url": re.compile(r"$^"),
        "text": re.compile(r"\bno (?:results|matches|items|products|flights|hotels|listings) (?:found|match|were found)"
                           r"|\b0 (?:results|matches|items)\b|did not match any|returned no results|nothing (?:was )?found"
                           r"|no results for|we couldn't find (?:any|anything)|found no (?:results|matches)", re.I),
    },
}


_LOAD_ERROR = re.compile(r"this site can(?:no|')t be reached|refused to connect|err_[a-z_]+", re.I)
_HANDLED = re.compile(r"\b(?:accepted|dismissed|closed|handled|gone|cleared|rejected|got rid of|now (?:i|let)"
                      r"|need to accept|let me accept|i'll accept|will accept)\b", re.I)
_BLOCKING = re.compile(r"\b(?:blocking|blocks|in the way|covers|covering|obscur\w*|won't go away|keeps? (?:coming|"
                       r"appearing|showing)|can't (?:close|dismiss|get past)|cannot (?:close|dismiss|get past))\b", re.I)


_WALL_WORDS = {
    "consent": "A cookie or consent dialog is in the way{on}. Click its accept or reject button once (such as "
               "'Accept all' or 'Reject all'), then carry on with the task.",
    "login": "{Site} is asking you to sign in{at}. Your task gives no login details, so do not guess them: look "
             "for a way that needs no account ({ways}), or report that the task needs a login.",
    "login_only": "{Site} is asking you to sign in{at}. What your task asks for is done from an account, and the "
                  "task gives no login details: do not guess them or look for a way around; report that the task "
                  "needs a login.",
    "login_past": "{Site} is asking you to sign in{at}. Your task only asks to find or look at something, which needs "
                  "no account: go back (the browser's back) to the page that showed what the task asks for and answer "
                  "from it; do not sign in, book or pay.",
    "login_cart": "{Site} is asking you to sign in{at}. Your task ends at the cart: adding to it needs no account, and "
                  "the task buys nothing, so do not sign in or check out. {cart}",
    "login_elsewhere": "This page asks you to sign in{at}, and it is not on {site}: do not enter the login details, "
                       "numbers or e-mail address your task gives here. Go back to {site} and sign in or look the "
                       "task up on its own pages, or report that the task needs a login.",
    "login_given": "{Site} is asking you to sign in{at}: use the login details your task gives, once; if they "
                   "are refused, report it rather than retrying.",
    "captcha": "{Site} shows a captcha or bot check{at}. Do not type guesses into it or reload again and again: go "
               "back and reach the page another way (the site's own search or menu), or report that the site "
               "blocks automated access.",
    "captcha_first": "{Site} shows a captcha or bot check{at}, before any of its pages has loaded for you. Do not "
                     "type guesses into it or reload again and again: report that the site blocks automated access.",
    "captcha_direct": "{Site} shows a captcha or bot check{at}, reached from a search engine's link. Do not type "
                      "guesses into it or click the link again and again: open {site} directly once (navigate to its "
                      "address) and use its own search; if the check shows there too, report that the site blocks "
                      "automated access.",
    # the ways round it were tried, or lead into it: "go back ... the site's own search" would send it in again
    "captcha_tried": "{Site} shows a captcha or bot check{at}{tried}. Do not type guesses into it or reload again and "
                     "again: report that the site blocks automated access.",
    "not_found": "The page{at} does not exist. Go back, or navigate from {site}'s home page or menu instead of a "
                 "guessed address.",
    "not_found_link": "The page{at} does not exist: the link you followed leads nowhere. Go back and reach the page "
                      "another way ({site}'s menu or search).",
    "blocked": "{Site} refuses access{at}. Loading the same address again will not help: go back and reach the "
               "page another way (the site's home page, menu or search), or report that the site blocks access.",
    "captcha_search": "The search engine shows a captcha or bot check, not {site}. Do not type guesses into it: open "
                      "{site} directly (navigate to its address) and look for what the task asks there.",
    "blocked_search": "The search engine refuses access, not {site}: open {site} directly (navigate to its address) and "
                      "look for what the task asks there.",
    "blocked_tried": "{Site} refuses access{at}{tried}. Loading the same address again will not help: report that "
                     "the site blocks access.",
    "load_error": "The browser could not load the page{came}: it shows its own error page. Loading the same address "
                  "again will not help: go back and reach the page another way (the site's home page, menu or "
                  "search), or report that the site cannot be reached.",
    "empty_results": "The search{on} found nothing. Search again with fewer or more general words (drop filters, "
                     "dates and exact phrases), check the spelling, or browse the category from the menu.",
}


# Tasks done only from a signed-in account (no guest way exists), and tasks that buy (a guest checkout may)
_ACCOUNT_TASK = re.compile(
    r"(?i)\b(?:un)?(?:follow|subscribe)\b|\b(?:up|down)vote|\bbookmark|\bfavou?rite\b|\b(?:give|leave|add) (?:a |my )?"
    r"(?:like|rating|comment|review)\b|^\s*like (?:the|this|a|it)\b|\b(?:write|leave|post|submit) (?:a |my )?(?:review"
    r"|comment|post|reply|answer)\b|\b(?:delete|clear|remove) (?:the |my )?(?:\w+ ){0,3}history\b|\bplaylist|\bwatch ?list"
    r"|\bwish ?list|\bsave (?:it |this |them |the \w+ )?(?:to|in) (?:my|a) ")
_PURCHASE_TASK = re.compile(r"(?i)\b(?:buy|purchase|order(?! (?:status|number|history|id|details|tracking|no\b|#|\d))|check ?out|book"
                            r"|reserve|pay|rent)\b|\bto (?:the |my )?cart\b")


# Tasks that end at the cart: they put something in it and buy nothing ("add them to my cart")
_CART_TASK = re.compile(r"(?i)\b(?:add|put|place)\b.{0,120}?\b(?:to|in|into) (?:the |my |your )?(?:shopping )?"
                        r"(?:cart|basket|bag|trolley)\b")
_BUYS = re.compile(r"(?i)\b(?:buy|purchase|check ?out|pay|place (?:the |an |my )?order|order (?:it|them|the|a|an)|book"
                   r"|reserve)\b")
_CART_PAGE = re.compile(r"(?i)/(?:cart|basket|bag|trolley|shopping-?cart)(?:[/?#.]|$)")


def cart_page(url: str | None) -> bool:
    """The address is a cart's or a checkout's page (its path, never its query)."""
    return bool(url) and bool(_CART_PAGE.search(_QUERY.sub("", url or "", count=1)) or _CHECKOUT_PAGE.search(
        _QUERY.sub("", url or "", count=1)))


def cart_task(task: str) -> bool:
    """The task ends at the cart ("add them to my cart") or goes past it (it buys): a cart's page may be its result;
    False for a task that only finds or looks (the cart is past it)."""
    return bool(_CART_TASK.search(task) or _BUYS.search(task))


_CHECKOUT_PAGE = re.compile(r"(?i)/(?:checkout|check-out|payment|place-?order)(?:[/?#.]|$)|//checkout\.")


def _cart_words(run: PartialRun) -> str:
    """Where a cart-only task goes from a sign-in page: back to the cart page it reached, or to the item's page."""
    cart = next((page(s.url, run.domain) for s in reversed(run.steps[:-1])
                 if s.url and same_site(s.url, run.domain) and _CART_PAGE.search(_QUERY.sub("", s.url, count=1))), None)
    if cart and cart.startswith("/"):
        return (f"You reached the cart at {cart} before: go back to it (the browser's back), check that it holds what "
                "the task asks for, and end the run there.")
    return ("Go back (the browser's back) to the item's page, add it to the cart there, check that the cart holds "
            "what the task asks for, and end the run.")


# Tasks that name what a guest lookup asks for: an order's or a booking's number, often with an e-mail
_LOOKUP_TASK = re.compile(r"(?i)\b(?:order|booking|reservation|confirmation|tracking|ticket|rebate|claim|case)\s*"
                          r"(?:number|no\.?|#|id|code)\b|\b(?:track|status of|look ?up|find) (?:my |an? |the )?(?:order"
                          r"|package|shipment|booking|reservation|rebate|claim)\b")


# Tasks that only find or look at something: no account is needed for them
_FIND_TASK = re.compile(r"(?i)\s*(?:find|show|browse|search|look|locate|check|see|view|what|which|how|list|compare|tell)"
                        r"\b")

# "my orders", "my saved cards", "our bookings": what only an account shows
_OWN_THINGS = re.compile(r"(?i)\b(?:my|our|mine)\b")

_QUERY = re.compile(r"\?[^#]*")


def _url_shows(patterns: dict[str, re.Pattern[str]], url: str | None) -> bool:
    """Whether the address names the wall: its scheme, host, path and fragment (a page's route after "#/"), never its
    query, whose parameter names and values say where a form came from or goes (`?g-recaptcha-response=&phone=...`
    on a lookup page, `?next=/login`); Cloudflare's challenge token is the one query that names a wall."""
    if not url:
        return False
    address = _QUERY.sub("", url, count=1)
    if patterns is WALLS["captcha"]:
        return "__cf_chl_" in url or any(not _in_slug(address, m) for m in patterns["url"].finditer(address))
    return bool(patterns["url"].search(address))


_SLUG_WORDS = 4  # "what-is-a-captcha": an article's or a product's name in its address, not a bot check


def _in_slug(address: str, m: re.Match[str]) -> bool:
    """The bare word "captcha" inside a path segment of four or more words (`/blog/how-captcha-works-today`)."""
    if m.group(0).lower() != "captcha":
        return False
    start = address.rfind("/", 0, m.start()) + 1
    end = address.find("/", m.end())
    segment = address[start:] if end < 0 else address[start:end]
    return len(re.split(r"[-_]+", segment)) >= _SLUG_WORDS


def _asks(pattern: re.Pattern[str], text: str) -> bool:
    """The page's text shows the wall. A captcha's weakest phrases ("Are you a robot?") count only near the top of the
    page or on a short page: a review or an article that quotes them is on a page that works."""
    m = pattern.search(text)
    if m is None or pattern is not WALLS["captcha"]["text"]:
        return m is not None
    if len(text) <= _CAPTCHA_SHORT or m.start() < _CAPTCHA_TOP or not _WEAK_ASK.fullmatch(m.group(0)):
        return True
    return any(not _WEAK_ASK.fullmatch(later.group(0)) for later in pattern.finditer(text, m.end()))


_WEAK_ASK = re.compile(_CAPTCHA_ASKS, re.I)


def walls(run: PartialRun) -> list[Signal]:
    steps = run.steps
    if not steps:
        return []
    last = steps[-1]
    prev = steps[-2] if len(steps) > 1 else None
    out = []
    name = site(run.domain) or site(domain_of(last.url)) or "the site"
    # the texts every wall looks at, cleaned once (a page can make them megabytes long: a prefix is read)
    hard = [clean(t[:10000])[:5000] for t in (last.observation, last.error) if t]
    words = clean((last.thought or "")[:5000])
    handled = bool(words and _HANDLED.search(words))
    said_stuck = bool(words and not handled and (STUCK.search(words) or _BLOCKING.search(words)))
    earlier: list[str] | None = None  # the step before's texts, cleaned when a wall needs them (seldom)
    for kind, patterns in WALLS.items():
        in_url = _url_shows(patterns, last.url)
        in_page = any(_asks(patterns["text"], t) for t in hard)
        # the agent's own words name a wall only when they say it is still in the way, not that it was handled
        # (a bot check the agent names is in its way whatever else it says: "Just a moment... Cloudflare")
        said = patterns.get("words", patterns["text"])
        in_words = (said_stuck or (kind in {"captcha", "blocked"} and not handled)) and bool(words and said.search(words))
        # a wall the agent is already handling (first sight, in its own words only) is not worth an interruption:
        # on the page, it counts when the step failed, the kind always stops a run, or the step before showed it
        # too; in the agent's words, when the step before showed it (that step looked at only when it decides)
        if not (in_url or (in_page and (last.failed or kind in {"captcha", "not_found", "blocked"}))):
            if not (in_page or in_words) or prev is None:
                continue
            if earlier is None:
                earlier = [clean(t[:10000])[:5000] for t in (prev.observation, prev.error, prev.thought) if t]
            if not (_url_shows(patterns, prev.url) or any(said.search(t) for t in earlier)):
                continue
        if kind == "empty_results" and not (in_page or in_words):
            continue
        at = page(last.url, run.domain)
        key, tried = kind, ""
        if kind == "blocked" and (unloaded(last.url) or any(_LOAD_ERROR.search(t) for t in hard)):
            key = "load_error"  # the browser's page, not the site's: no site is named
        if kind in {"captcha", "blocked"} and key == kind and name != "the site" and _search_engine(last.url):
            key = f"{kind}_search"  # the search engine's wall, not the site's: the site is opened directly
        elif kind == "login" and name != "the site" and _elsewhere(last.url, run.domain):
            key, at = "login_elsewhere", None  # a sign-in page on a host that is not the site's: never its details
        elif kind == "login" and re.search(r"\b(?:password|log ?in|sign ?in|credentials?|username|my account)\b",
                                           run.task, re.I):
            key = "login_given"
        elif kind == "login" and _CART_TASK.search(run.task) and not _BUYS.search(run.task):
            key = "login_cart"  # the task ends at the cart: a checkout's sign-in is past it
        elif kind == "captcha" and last.url and not any(
                st.url and same_site(st.url, run.domain) and not _url_shows(patterns, st.url) and st.url != last.url
                for st in steps[:-1]):
            key = "captcha_first"  # no page of the site without the wall: no other way to reach on it
            if name != "the site" and _from_search(steps):
                key = "captcha_direct"  # a search result's link led in: its own address, opened directly, may not
        elif kind in {"captcha", "blocked"} and key == kind and (why := _tried(run, at)) is not None:
            key, tried = f"{kind}_tried", why
        elif kind == "login" and _FIND_TASK.match(run.task) and not _OWN_THINGS.search(run.task) and not (
                _ACCOUNT_TASK.search(run.task) or _PURCHASE_TASK.search(run.task) or _LOOKUP_TASK.search(run.task)) and any(
                st.url and same_site(st.url, run.domain) and not _url_shows(patterns, st.url) for st in steps[:-1]):
            key = "login_past"  # it went on past what it was to find, towards an account: back to the results
        elif kind == "login" and _ACCOUNT_TASK.search(run.task):
            key = "login_only"  # following, liking, a playlist, a history: no guest way exists
        elif kind == "not_found" and action_verb(last.action) not in {"navigate", "other"}:
            key = "not_found_link"  # a click led there: no address was guessed
        came = located(next((s.url for s in reversed(steps) if s.url and not unloaded(s.url)), None), run.domain) \
            if key == "load_error" else ""
        given = _lookup_details(run.task)
        ways = (f"a guest lookup with {given}" if given else "a guest lookup with the details your task gives (an "
                "order or booking number, an e-mail)") + ", public pages" if _LOOKUP_TASK.search(run.task) else (
            "guest checkout, public pages, the site's search" if _PURCHASE_TASK.search(run.task)
            else "public pages, the site's search")
        message = _WALL_WORDS[key].format(cart=_cart_words(run) if key == "login_cart" else "", tried=tried, on=f" on {name}", at=f" at {at}" if at else "", site=name, ways=ways,
                                          Site=name[:1].upper() + name[1:], came=f" after your last step{came}" if came else "")
        confidence = 0.9 if in_url else (0.8 if in_page else 0.65)
        out.append(Signal(f"wall:{kind}", confidence, message, {"wall": kind, "page": at, "given": key == "login_given"}))
    return out


# an e-mail address, a code with a digit (W123456), a number of five digits or more (also glued to a word: "of2412")
# sign-in pages of identity providers a site hands over to ("Sign in with Google"): a sign-in there is the site's
_IDENTITY_HOST = re.compile(r"(?:accounts\.google|login\.microsoftonline|login\.live|appleid\.apple|(?:www\.|m\.)?facebook"
                            r"|github|[\w-]+\.okta|[\w-]+\.auth0|(?:api\.)?id|(?:secure\.)?login|(?:www\.)?paypal)"
                            r"\.(?:com|me|gov)")


def _from_search(steps: list[Step]) -> bool:
    """The wall was reached from a search engine's results, and no step went to an address directly (a `goto`)."""
    before = next((s for s in reversed(steps[:-1]) if s.url and not _url_shows(WALLS["captcha"], s.url)), None)
    return before is not None and _search_engine(before.url) and not any(
        action_verb(s.action) == "navigate" for s in steps)


def _search_engine(url: str | None) -> bool:
    return bool(url) and bool(SEARCH_HOST.fullmatch((domain_of(url) or "").lower()))


def _elsewhere(url: str | None, domain: str | None) -> bool:
    """`url` is on a host that is neither the task's site, its brand's own services nor an identity provider's."""
    host = (domain_of(url) or "").lower() if url else ""
    return bool(host and domain and not same_site(host, domain) and not brand_service(url, domain)
                and not _IDENTITY_HOST.fullmatch(host))


_DETAIL = re.compile(r"[\w.+-]{1,40}@[\w-]{1,40}(?:\.[\w-]{1,20}){1,3}|(?<![\w.-])(?=[A-Z0-9-]*\d)[A-Z0-9][A-Z0-9-]{4,24}"
                     r"(?![\w-]|\.\w)|(?<![\d.-])\d{5,24}(?![\w-]|\.\w)")


def _lookup_details(task: str) -> str | None:
    """The numbers and e-mail addresses the task gives for a guest lookup ("'24124124091' and 'bo@x.com' from your
    task"), quoted as the task has them; None when it gives none (the agent's own task: said back to it alone)."""
    found = list(dict.fromkeys(m.group(0) for m in _DETAIL.finditer(clean(task)[:600])
                               if not re.fullmatch(r"\d{1,4}(?:-\d{1,2}){2}|\d{1,2}-\d{1,2}-\d{2,4}", m.group(0))))[:3]
    if not found:
        return None
    quoted = [f"'{f}'" for f in found]
    return (quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" and {quoted[-1]}") + " from your task"


def _tried(run: PartialRun, at: str | None) -> str | None:
    """What makes "go back and reach the page another way (the site's search or menu)" no remedy at a captcha or a
    refusal, in words (" after your search", ", and you have gone back already"), else "": the action that led to the
    wall (the first step whose address is the wall's: a step's address is the page its action led to) was a search
    (the site's search leads into it), the agent has gone back twice in its last steps, or the
    wall stands at the site's home page (its search and menu are behind it; said by "at the home page": ""); else None."""
    steps = run.steps
    first = len(steps) - 1  # where the wall began: the steps on its address, the last one's
    while first > 0 and steps[first - 1].url and steps[first - 1].url == steps[-1].url:
        first -= 1
    led = steps[first]  # a step's address is where its action led (the data's convention): the first one there
    verb = action_verb(led.action)
    if verb == "search" or verb in {"type", "press"} and re.search(r"(?i)search", led.action):
        return " after your search"  # "fill_search[35,laptop]", "TYPE: laptop [searchbox]", a search engine's too
    if sum(action_verb(s.action) == "back" for s in steps[-5:]) >= 2:
        return ", and you have gone back already"
    return "" if at == "the home page" else None  # "at the home page": its search and menu are behind it


HARD_WALLS = {"wall:captcha", "wall:not_found", "wall:blocked"}


def sign_in_page(url: str | None) -> bool:
    """The address is a sign-in page (the login wall's own URL pattern)."""
    return _url_shows(WALLS["login"], url)


def dead_end(run: PartialRun, signals: list[Signal], plan_url: str | None = None) -> bool:
    """The agent is on no page it can act on: a captcha, a missing page, a refusal, or a tab that shows no page;
    or on a sign-in page its task gives no login for, where the successful run's next step (taken at `plan_url`)
    was not. Another run's next steps on the site do not apply from there."""
    return bool(run.steps and unloaded(run.steps[-1].url)) or any(
        s.kind in HARD_WALLS or s.kind == "wall:login" and not s.facts.get("given") and not sign_in_page(plan_url)
        for s in signals)
