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

import re

from coach.models import PartialRun, Signal
from coach.pages import SEARCH_HOST, same_site, site, unloaded
from coach.words import fold
from condenser import domain_of
from condenser.sites import registrable_domain

RECENT = 6  # pages looked at: the last this many steps with an address
# a short link or an ad's redirect: where a run may open before it reaches the site
_REDIRECTOR = re.compile(r"(?:bit\.ly|t\.co|tinyurl\.com|goo\.gl|ow\.ly|buff\.ly|l\.facebook\.com|lnkd\.in"
                         r"|[\w.-]*linksynergy\.com|[\w.-]*doubleclick\.net|[\w.-]*googleadservices\.com)")
# a step of a hand-over, by its address: sign-in, identity, consent, payment, a captcha
_HAND_OVER = re.compile(r"(?:^|[./_-])(?:log-?in|sign-?in|sso|oauth2?|authorize|auth|accounts?|id|idp|identity"
                        r"|verify|verification|consent|checkout|pay|payments?|3ds|acs|challenge|captcha)(?:$|[./_?=&-])",
                        re.I)


def _brand(host: str | None) -> str:
    """The name a site goes by (`travelzoo` of www.travelzoo.com, `amazon` of amazon.co.uk)."""
    return (registrable_domain(host) or "").split(".")[0] if host else ""


def _named(brand: str, task: str) -> bool:
    """The task names the site by its brand as a word ("in travelzoo", "on last.fm"; not "travelzoo-deals")."""
    return len(brand) >= 3 and bool(re.search(rf"(?<![a-z0-9-]){re.escape(brand)}(?![a-z0-9-])", fold(task)))


def _neutral(url: str, own: str, task: str) -> bool:
    """A page on the way to the task's site and back, or of a site the task also names (see the module)."""
    host = (domain_of(url) or "").lower()
    if not host or SEARCH_HOST.fullmatch(host) or _REDIRECTOR.fullmatch(host):
        return True
    brand = _brand(host)
    if brand == _brand(own) or (registrable_domain(host) or "-") in fold(task):
        return True  # its own brand elsewhere, or a site the task names by its address ("on walmart.com"); a brand
        # alone is no site the task names: "in Fiji" names a place, and fiji.travel is an ad
    address = url.split("://", 1)[-1]
    return bool(_HAND_OVER.search(address.split("#")[0]))


def _vouched(run: PartialRun, own: str) -> bool:
    """Something besides the run's first page says `own` is the task's site: the task names it, or the run was
    started there (and it is no search engine or short link)."""
    if _named(_brand(own), run.task):
        return True
    start = domain_of(run.start_url) if run.start_url else None
    return bool(start) and same_site(start, own) and not (SEARCH_HOST.fullmatch(start or "")
                                                          or _REDIRECTOR.fullmatch(start or ""))


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
    count = f"{n} of your last {len(recent)} pages were on other sites than {own}" if n < len(recent) else \
        f"your last {n} pages were on other sites than {own}"
    if visited:
        message = (f"You have left {own}, the site your task is on: {count}. Links that lead off {own} (ads, "
                   f"partners' offers) do not do the task: go back to {own} (the browser's back, or navigate to its "
                   f"address) and finish the task on its own pages.")
    else:
        message = (f"This run has not opened {own} yet, the site your task is on, and {count}: what you do on other "
                   f"sites does not do the task. Open {own} (navigate to its address) and do the task there.")
    return Signal("away", round(min(0.8, 0.5 + 0.05 * n + (0.1 if not visited else 0.0)), 2), message,
                  {"site": own, "pages": n, "visited": visited, "count": count,
                   "step": f"go back to {own}" if visited else f"open {own}"})
