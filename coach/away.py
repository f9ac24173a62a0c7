"""The agent has left the task's site: its last pages are on other sites (an ad, a partner's page, a result of a web
search that is not the site), so what it does there does not do the task.

A web search on the way to the site, a page with no site (a blank tab, the browser's error page) and a sign-in or
payment provider the site hands over to are no departure.
"""

from __future__ import annotations

from coach.models import PartialRun, Signal
from coach.pages import off_site, same_site, site, unloaded
from condenser import domain_of
from condenser.sites import registrable_domain

RECENT = 6  # pages looked at: the last this many steps with an address
# sites a task's site sends the agent through and back (a web search on the way to it, a sign-in or a payment)
_PASSING = frozenset({
    "google", "bing", "duckduckgo", "yahoo", "baidu", "yandex", "ecosia", "startpage", "brave", "paypal", "stripe",
    "klarna", "affirm", "afterpay", "adyen", "braintreegateway", "shopify", "okta", "auth0", "microsoftonline",
    "recaptcha", "hcaptcha", "cloudflare", "onetrust", "cookielaw", "usercentrics", "didomi", "trustarc"})


def _passing(url: str) -> bool:
    host = domain_of(url)
    return bool(host) and (registrable_domain(host) or "").split(".")[0] in _PASSING


def left_site(run: PartialRun) -> Signal | None:
    """The last two pages are on other sites than the task's, or the last and at least half of the last few are (a
    web search, a sign-in or a payment provider counts as none): said with where the agent is and where the task
    is done."""
    own = site(run.domain)
    pages = [s.url for s in run.steps if s.url and not unloaded(s.url)]
    if not own or len(pages) < 2:
        return None
    recent = pages[-RECENT:]
    gone = [not same_site(u, run.domain) and not _passing(u) for u in recent]
    last = off_site(recent[-1], run.domain)
    n = sum(gone)
    if not last or not gone[-1] or not (gone[-2] or n >= 3 and 2 * n >= len(recent)):
        return None  # one page away and back to the site's: maybe a page the site opens for a moment
    visited = any(same_site(u, run.domain) for u in pages)
    count = f"{n} of your last {len(recent)} pages were on other sites than {own}" if n < len(recent) else \
        f"your last {n} pages were on other sites than {own}"
    if visited:
        message = (f"You are on {last} now, and {count}, the site your task is on. Links that lead off {own} (ads, "
                   f"partners' offers) do not do the task: go back to {own} (the browser's back, or navigate to its "
                   f"address) and finish the task on its own pages.")
    else:
        message = (f"You are on {last} now, and this run has not opened {own} yet, the site your task is on: what you "
                   f"do on other sites does not do it. Open {own} (navigate to its address) and do the task there.")
    return Signal("away", round(min(0.8, 0.5 + 0.05 * n + (0.1 if not visited else 0.0)), 2), message,
                  {"away": last, "site": own, "pages": n, "visited": visited, "count": count,
                   "step": f"go back to {own}" if visited else f"open {own}"})
