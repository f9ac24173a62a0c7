"""The agent has left the task's site: its last pages are on other sites (an ad, a partner's page, a lure), so what
it does there does not do the task.

Said only of a task's site that something other than the run's first page vouches for: the task names it ("in
travelzoo"), or the run was started on it (a run that opens at a search engine, a short link or a lure took that
page's site for its own). Pages on the way and back count as none: a search engine's results, a sign-in, identity,
payment or captcha step the site hands over to (known by its address: `/login`, `/oauth/authorize`, `checkout.`),
the site's own brand under another domain (amazon.co.uk for amazon.com), another site the task names by its
address ("and on walmart.com"), a blank tab.
The other site is never named: its name is the attacker's to choose ("paywithbitcoin.com"), and the agent knows
where it is; the message names only the task's site.
"""

from __future__ import annotations

import difflib
import re

from coach.models import PartialRun, Signal
from coach.pages import SEARCH_HOST, brand, brand_service, same_site, site, unloaded
from coach.words import fold
from condenser import action_verb, domain_of
from condenser.sites import registrable_domain

RECENT = 6  # pages looked at: the last this many steps with an address
# a short link or an ad's redirect: where a run may open before it reaches the site
_REDIRECTOR = re.compile(r"(?:bit\.ly|t\.co|tinyurl\.com|goo\.gl|ow\.ly|buff\.ly|l\.facebook\.com|lnkd\.in"
                         r"|[\w.-]*linksynergy\.com|[\w.-]*doubleclick\.net|[\w.-]*googleadservices\.com)")
# a step of a hand-over, by its address: sign-in, identity, consent, payment, a captcha
_HAND_OVER = re.compile(r"(?:^|[./_-])(?:log-?in|sign-?in|sso|oauth2?|authorize|auth|accounts?|id|idp|identity"
                        r"|verify|verification|consent|checkout|pay|payments?|3ds|acs|challenge|captcha)(?:$|[./_?=&-])",
                        re.I)


def _looks_alike(url: str, own: str) -> bool:
    """The page's site has a name close to the task's site's ("tickets-center" for "ticketcenter", "mazon" for
    "amazon"): one letter, a hyphen or a plural apart, and not the site itself or its brand's own services."""
    theirs = (registrable_domain(domain_of(url) or "") or "").split(".", 1)[0]
    mine = (registrable_domain(own) or own).split(".", 1)[0]
    if not theirs or not mine or same_site(url, own) or brand_service(url, own) or len(mine) < 4:
        return False
    a, b = theirs.replace("-", ""), mine.replace("-", "")
    return a == b or difflib.SequenceMatcher(a=a, b=b, autojunk=False).ratio() >= 0.8


def _named(brand: str, task: str) -> bool:
    """The task names the site by its brand as a word ("in travelzoo", "on last.fm"; not "travelzoo-deals")."""
    return len(brand) >= 3 and bool(re.search(rf"(?<![a-z0-9-]){re.escape(brand)}(?![a-z0-9-])", fold(task)))


def _neutral(url: str, own: str, task: str) -> bool:
    """A page on the way to the task's site and back, or of a site the task also names (see the module)."""
    host = (domain_of(url) or "").lower()
    if not host or SEARCH_HOST.fullmatch(host) or _REDIRECTOR.fullmatch(host):
        return True
    named = re.escape(registrable_domain(host) or "-")
    if brand_service(host, own) or re.search(rf"(?<![\w.-]){named}(?![\w-])", fold(task)):
        return True  # its own brand elsewhere, or a site the task names by its address ("on walmart.com"); a brand
        # alone is no site the task names: "in Fiji" names a place, and fiji.travel is an ad
    address = url.split("://", 1)[-1]
    return bool(_HAND_OVER.search(re.split(r"[?#]", address, maxsplit=1)[0]))  # its host and path, never its query


def _vouched(run: PartialRun, own: str) -> bool:
    """Something besides the run's first page says `own` is the task's site: the task names it, or the run was
    started there (and it is no search engine or short link)."""
    if _named(brand(own), run.task):
        return True
    start = domain_of(run.start_url) if run.start_url else None
    return bool(start) and same_site(start, own) and not (SEARCH_HOST.fullmatch(start or "")
                                                          or _REDIRECTOR.fullmatch(start or ""))


# an address that says an ad or a partner's offer brought the visitor (`?utm_source=ad`, an affiliate's click id)
_AD_MARK = re.compile(r"[?&#](?:utm_[a-z]+|aff(?:iliate)?(?:_?id)?|affid|clickid|irclickid|cjevent|gclid|fbclid|msclkid"
                      r"|campaign(?:_?id)?|adid|ad_?id|sponsor(?:ed)?)=", re.I)


# pages whose links others write: a forum's, reviews', questions', a member's page (discussions.apple.com/thread/255)
_USER_CONTENT = re.compile(r"(?:^|[./])(?:discussions?|forums?|community|communities|answers|questions?|reviews?|comments?"
                           r"|threads?|posts?|users?|members?|profiles?|groups?|boards?|r|u|blog|ugc)(?:$|[./?#-])", re.I)


def _sites_own_page(url: str, own: str) -> bool:
    """A page the site writes itself: on its own host (or www.), not where its users post."""
    host = (domain_of(url) or "").lower()
    if host.removeprefix("www.") != own.removeprefix("www.").lower():
        return False  # another host of the site (discussions.apple.com, a seller's store): its users' pages, maybe
    address = url.split("://", 1)[-1].split("#")[0].split("?")[0]
    return not _USER_CONTENT.search(address.split("/", 1)[-1] if "/" in address else "")


def _linked(run: PartialRun, own: str) -> bool:
    """The agent reached the other sites by clicking a link on a page of the task's site (not by an address it typed
    or a search) that no ad's marks follow: the site itself sent it there, maybe for its own form or document (a
    rebate tracker, a menu's PDF), maybe for a partner's offer; the agent can tell which. A step's address is the
    page its action led to: the first step off the site holds the action that left it."""
    steps = [s for s in run.steps if s.url and not unloaded(s.url) and domain_of(s.url)]
    for before, after in zip(reversed(steps[:-1]), reversed(steps[1:]), strict=True):
        if same_site(after.url or "", own):
            return False  # back on the site after it: a later departure decides
        if same_site(before.url or "", own):
            return (action_verb(after.action) == "click" and not _AD_MARK.search(after.url or "")
                    and _sites_own_page(before.url or "", own))
    return False


def left_site(run: PartialRun) -> Signal | None:
    """The last two pages are on other sites than the task's, or the last and at least half of the last few are
    (pages on the way and back count as none): said with where the task is done, never where the agent is."""
    own = site(run.domain)
    pages = [s.url for s in run.steps if s.url and not unloaded(s.url) and domain_of(s.url)]
    if not own or len(pages) < 2 or not _vouched(run, own):
        return None
    recent = pages[-RECENT:]
    gone = [not same_site(u, run.domain) and not _neutral(u, own, run.task) for u in recent]
    n = sum(gone)
    if not gone[-1] or not (gone[-2] or n >= 3 and 2 * n >= len(recent)):
        return None  # one page away and back to the site's: maybe a page the site opens for a moment
    visited = any(same_site(u, run.domain) for u in pages)
    linked = _linked(run, own) if visited else False
    off = sum(not same_site(u, run.domain) for u in recent)  # a search engine's pages count as other sites in words
    count = f"{off} of your last {len(recent)} pages were on other sites than {own}" if off < len(recent) else \
        f"your last {off} pages were on other sites than {own}"
    alike = _looks_alike(pages[-1], own) if gone[-1] else False
    if alike:  # "tickets-center.com" for "ticketcenter.com": the agent may take it for the task's site (never named)
        count += (f"; the site you are on now is not {own}, though its name looks like it (a different address, "
                  f"whatever its pages say)")
    if linked:  # the site's own link: its form or document elsewhere (a rebate tracker), or an ad: the agent can tell
        message = (f"You followed a link on {own} to another site, and {count}. If it is {own}'s own form or document "
                   f"for this task, go on there, entering nothing the task does not give; if it is an ad or a partner's "
                   f"offer, go back to {own} (the browser's back) and finish the task on its own pages.")
    elif visited:
        message = (f"You have left {own}, the site your task is on: {count}. What you do on other sites does not "
                   f"do the task: go back to {own} (the browser's back, or navigate to its address) and finish the "
                   f"task on its own pages.")
    else:
        message = (f"This run has not opened {own} yet, the site your task is on, and {count}: what you do on other "
                   f"sites does not do the task. Open {own} (navigate to its address) and do the task there.")
    confidence = 0.5 if linked else min(0.8, 0.5 + 0.05 * n + (0.1 if not visited else 0.0))
    return Signal("away", round(confidence, 2), message,
                  {"site": own, "pages": n, "visited": visited, "count": count, "linked": linked,
                   "step": f"go back to {own}" if visited else f"open {own}"})
