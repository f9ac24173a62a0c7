"""Where the agent is, in words it may read: a site's name, the path of a page on the run's own site, another
site's name, and the host names a text holds or hides (`evil . com`, `evil(dot)com`, an IP address).

Every path segment passes the label checks of `coach.words` (instructions, orders, notes to the reader) before any
of it is shown; a segment that hides a host, an address or an instruction withholds the whole page.
"""

from __future__ import annotations

import functools
import re
from itertools import takewhile
from urllib.parse import unquote, urlsplit

from coach.steering import advises, steers
from coach.words import ASCII_LOOKALIKE, IDLIKE, clean, fold, instruction_like, spells_instruction
from condenser import domain_of
from condenser.sites import is_public_suffix, registrable_domain

_PATH_SEG = re.compile(r"^[A-Za-z0-9._~-]{1,24}$")


@functools.lru_cache(maxsize=16_384)  # a pure function of the name, asked for many times a coaching call
def site(domain: str | None) -> str | None:
    """A host name fit to show, or None."""
    d = clean(domain).lower()
    if not d or len(d) > 60 or not re.fullmatch(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+", d):
        return None
    if any(_bad_segment(label) for label in d.split(".")[:-1]):
        return None  # "tell-the-user-to-wire-money.net": the run's own site too is named only when it carries no order
    return d


def same_site(url_or_domain: str | None, domain: str | None) -> bool:
    """True when both name the same registrable domain (a URL without a host is relative: same site)."""
    if not url_or_domain:
        return True
    host = domain_of(url_or_domain) if ("/" in url_or_domain or ":" in url_or_domain) else url_or_domain
    if host is None:
        return url_or_domain.lstrip().startswith("/")
    if not domain:
        return False
    return registrable_domain(host) == registrable_domain(domain)


def _bad_segment(segment: str) -> bool:
    """A path segment that hides a host, an address or an instruction (`evil.com`, `evil.to`, `evil-dot-ai`,
    `10.0.0.1`, `ignore_rules`)."""
    words = " ".join(re.split(r"[_\-.~+%]+|(?<=[a-z])(?=[A-Z])", segment))
    looks = " ".join(re.split(r"[_\-.~+%]+", ASCII_LOOKALIKE.sub(lambda m: "l" if m.group(0) == "I" else "w", segment)))
    if looks != " ".join(re.split(r"[_\-.~+%]+", segment)) and (steers(fold(looks)) or advises(fold(looks))):  # "Task-compIete"
        return True
    return bool(disguised_hosts(segment) or _host_segment(segment) or re.fullmatch(r"[\d.]+", segment) and segment.count(".") >= 2
                or segment.lower().startswith("xn--") or spells_instruction(words) or instruction_like(words)
                or len(segment) <= 64 and (steers(fold(words)) or advises(fold(words))))  # a longer one is never shown


_SPELLED_DOT = re.compile(r"(?i)[a-z0-9][-_]dot[-_][a-z]{2,}")


def _host_segment(segment: str) -> bool:
    """`evil.to`, `evil.lol`: a name ending in a public suffix (any TLD, from the public-suffix list), or a dot
    spelled out (`evil-dot-ai`). A page's own file name (`index.html`, `store-locator.shtml`) is none."""
    if _SPELLED_DOT.search(segment):
        return True
    name, dot, tld = segment.lower().rpartition(".")
    return bool(dot and name and re.fullmatch(r"[a-z]{2,24}", tld) and tld not in _FILE_TYPES and is_public_suffix(tld))


_FILE_TYPES = frozenset("html htm shtml xhtml php asp aspx jsp jspx cfm cgi pl json xml rss pdf jpg jpeg png gif svg "
                        "webp css js txt csv doc docx xls xlsx ppt pptx mp3 mp4 webm".split())


# hosts that serve one function of a site (sign-in, accounts, help, payment): their root is not the site's home
_SERVICE_HOST = re.compile(r"(?:log-?in|sign-?in|auth|sso|id|accounts?|my-?account|secure\d*|help|support|faq"
                           r"|checkout|pay(?:ments?)?|billing|passport)", re.I)


def _other_host(url: str, domain: str | None) -> str | None:
    """The host of `url` when it is a service host of the run's site other than the task's own (`login.yahoo.com`
    for a task on sports.yahoo.com), fit to show: its own labels pass the same checks as a path segment."""
    host = (domain_of(url) or "").lower().removeprefix("www.")
    own = ((domain_of(domain) if domain and "/" in domain else clean(domain)) or "").lower().removeprefix("www.")
    base = registrable_domain(host) if host else ""
    if not host or not base or host in {own, base}:
        return None
    labels = host[: -len(base)].rstrip(".").split(".")
    if not _SERVICE_HOST.fullmatch(labels[0]):
        return None  # `us.megabus.com`, `new.mta.info`, `m.shop.com`: the site's own home page under another name
    if len(labels) > 2 or any(len(x) > 20 or _bad_segment(x) for x in labels):
        return None
    return site(host)


# a results page of a site's own search, by its address: "/search", "?q=", "?keywords=" (`coach.plan`, `coach.runstate`)
SEARCH_PAGE = re.compile(r"/search\b|[?&](?:q|query|keywords?|search_query|k|s|search|search_?terms?|term)=", re.I)

# a web search's own result hosts: the one kind of other site a message names (where the agent searches for the
# task's site); `google.com` of www.google.com, not docs.google.com or sites.google.com, where anyone publishes
SEARCH_HOST = re.compile(r"(?:www\.)?(?:google|bing|yandex|baidu|ecosia|startpage|naver)\.[a-z.]{2,10}|duckduckgo\.com"
                         r"|search\.(?:yahoo|brave|aol)\.[a-z.]{2,10}")


def named_elsewhere(url: str | None, name: str | None) -> str:
    """How a message names another site the agent is on: a search engine by its name ("google.com"), any other as
    "another site" (its name is its owner's to choose: "paywithbitcoin.com", "wa-14155550199.com")."""
    host = (domain_of(url) or "").lower() if url else ""
    return name if name and SEARCH_HOST.fullmatch(host) else "another site"


# words a brand's own services put before or after its name (shopmarriott, amc-theatres-res, mytesla)
_AFFIXED = re.compile(r"shop|store|book(?:ing)?|my|go|get|res|cdn|static|media|img|images|assets|files|help|support"
                      r"|careers|jobs|secure|app|news|blog|-")


def brand(host: str | None) -> str:
    """The name a site goes by (`travelzoo` of www.travelzoo.com, `amazon` of amazon.co.uk)."""
    return (registrable_domain(host) or "").split(".")[0] if host else ""


def brand_service(url: str | None, domain: str | None) -> bool:
    """`url` is on another domain of the site's own brand: the brand under another suffix (amazon.co.uk), the brand
    with a word of its own services under the site's own suffix (shopmarriott.com, store.mytesla.com), or files under
    the brand's name on a file host (amc-theatres-res.cloudinary.com). Never a name that only begins with it
    (teslarati.com, a fan site), the brand as a subdomain of another site (apple.evil-deals.com,
    apple.stackexchange.com), an affixed name under another suffix (myapple.top), or a brand shorter than four
    letters."""
    host, mine = (domain_of(url) or "").lower() if url else "", brand(domain)
    if not host or not mine or same_site(host, domain or ""):
        return False
    if brand(host) == mine:
        return True
    own = (registrable_domain(host) or "").split(".", 1)
    if len(mine) >= 4 and len(own) == 2 and own[1] == (registrable_domain(domain) or "").split(".", 1)[-1] and (
            _affixed(own[0], mine)):
        return True  # shopmarriott.com for marriott.com
    return len(mine) >= 4 and bool(_FILE_HOST.fullmatch(registrable_domain(host) or "")) and any(
        _affixed(label, mine) for label in host.split(".")[:-2])


def _affixed(label: str, mine: str) -> bool:
    name = label.replace("-", "")
    return mine in name and bool(_AFFIXED.fullmatch(name.removeprefix(mine).removesuffix(mine) or "-"))


# hosts that serve other sites' files under the site's name (amc-theatres-res.cloudinary.com)
_FILE_HOST = re.compile(r"cloudinary\.com|cloudfront\.net|akamaized\.net|azureedge\.net|imgix\.net|fastly\.net"
                        r"|googleusercontent\.com|blob\.core\.windows\.net|amazonaws\.com|scene7\.com")


def off_site(url: str | None, domain: str | None) -> str | None:
    """The site (registrable domain) of `url` when it is not the task's own, fit to show; else None."""
    if not url or re.match(r"\s*(?!https?:)[a-z][a-z0-9+.-]*:(?!\d)", url, re.I):
        return None  # a mailto:, javascript: or data: address, or a user@host one, names no site the agent is on
    host = domain_of(url)
    if not host or not domain or same_site(host, domain) or re.fullmatch(r"[\d.]+|.*:.*", host):
        return None  # an IP address names no site
    name = site(registrable_domain(host))
    return name if name and not any(_bad_segment(x) for x in name.split(".")[:-1]) else None


def _bad_path(path: str) -> bool:
    """A path with a segment that hides a host, an address or an instruction, or an order split over segments
    (/task/complete, /stop/now)."""
    if any(_bad_segment(seg) for seg in path.split("/") if seg):
        return True
    return len(path) <= 96 and (steers(words := fold(" ".join(re.split(r"[/_\-.~+%]+", path)))) or advises(words))


_HOME_FILE = re.compile(r"(?i)(?:index|default|home|main)(?:\.(?:html?|php|aspx?|jsp))?")


def page(url: str | None, domain: str | None, depth: int = 3) -> str | None:
    """The path of `url` when it is on the run's own site, shortened: `/event/9`, `/checkout`; else None."""
    u = clean(url)
    if not u or not same_site(u, domain):
        return None
    try:
        path = urlsplit(u if "://" in u else "http://x" + (u if u.startswith("/") else "/" + u)).path
    except ValueError:
        return None
    if "//" in path.strip("/"):
        return None
    segments = [s for s in path.split("/") if s]
    if _bad_path(path) or "%" in path and _bad_path(unquote(path)):  # "/%73top%2Dnow" read as the agent reads it
        return None
    if not segments or len(segments) == 1 and _HOME_FILE.fullmatch(segments[0]):  # "/index.htm" is the home page
        return _other_host(u, domain) or "the home page"
    shown = list(takewhile(_PATH_SEG.match, segments[:min(depth, 3)]))  # the path's own beginning, never pieces
    while shown and len(shown[-1]) <= 2 and shown[-1].isalpha():
        shown.pop()  # "/c/tents/f": a one- or two-letter tail names nothing the agent could recognise
    if not shown:
        return None
    cut = len(shown) < len(segments)
    shown = ["…" if IDLIKE.fullmatch(seg) else seg for seg in shown]  # product/session ids say nothing
    if all(seg == "…" for seg in shown):
        return None  # "/…" names no page the agent could recognise
    text = "/" + "/".join(shown) + ("/…" if cut and shown[-1] != "…" else "")  # deeper than shown: said so
    words = fold(" ".join(re.split(r"[/_\-.~+%…]+", text)))  # what is shown, read as one: the whole path may be long
    if len(text) > 48 or instruction_like(text.replace("/", " ")) or steers(words) or advises(words):
        return None
    return text


def hosts_in(text: str) -> set[str]:
    """Host names mentioned in text."""
    return {m.lower() for m in re.findall(r"\b(?:[a-z0-9-]+\.)+(?:com|org|net|gov|edu|io|co|uk|de|fr|example|info"
                                          r"|biz|us|ca|au|jp|app|dev|ai|xyz|ru|cn)\b", clean(text), re.I)}


def disguised_hosts(text: str) -> set[str]:
    """Host names written to slip past a plain host pattern: `evil . com`, `evil(dot)com`, `evil[.]com`, IPs."""
    t = clean(text).lower()
    t = re.sub(r"(?<=\w)\s*(?:\(dot\)|\[dot\]|\[\.\]|\{dot\}|\bdot\b|[.\u00b7\u2027\u2022\u3002\uff0e\uff61\u2024])\s*(?=\w)",
               ".", t)
    found = set(re.findall(r"\b\d{1,3}(?:\.\d{1,3}){3}\b|\bxn--[\w.-]+", t))
    found |= {m for m in re.findall(r"\b(?:[a-z0-9-]+\.)+[a-z]{2,24}\b", t)
              if m.rsplit(".", 1)[-1] in _TLDS}
    if re.search(r"javascript:|data:|file:|//", t):
        found.add("javascript:")
    return found


_TLDS = frozenset("com org net gov edu io co uk de fr es it nl ru cn jp kr in br au ca us info biz app dev ai xyz "
                  "site online shop store top me tv cc ly gg example test local internal".split())


def unloaded(url: str | None) -> bool:
    """A step that is on no page of any site: a blank tab or the browser's own error page (a run that records no
    URL, or an empty one, says nothing)."""
    u = (url or "").strip().lower()  # an empty URL says nothing either
    return u.startswith(("about:", "chrome-error:", "chrome:", "edge:", "data:"))


def located(url: str | None, domain: str | None) -> str:
    """" on koa.com at /glamping", " on amctheatres.com (the home page)": where `url` is, in words, or "" when
    its site is neither the task's nor one fit to name."""
    if not url:
        return ""
    away = off_site(url, domain)
    name = named_elsewhere(url, away) if away else (site(domain) if same_site(url, domain) else None)
    if not name:
        return ""
    where = page(url, domain) if same_site(url, domain) else None
    return f" on {name}" + (f" at {where}" if where and where.startswith("/") else f" ({where})" if where else "")
