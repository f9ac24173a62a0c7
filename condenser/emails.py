"""E-mail addresses: plain, internationalized, percent-encoded (once or twice), escaped as in page JSON (\\u0040),
and written out ("jane(at)example(dot)com", "jane at gmail.com" for a mail service's host). Called from
`condenser.personal`.
"""

from __future__ import annotations

import re

from condenser.placeholders import EMAIL
from condenser.scan import Hits, substitute_at

# \w leaves out combining marks, which Indic scripts write vowels with (डाटा): they are added by hand
_MARK = "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0900-\u0dff\u0e31-\u0e4e\u1ab0-\u1aff\u20d0-\u20ff"
# RFC 5322 also allows & / = ? in a local part; no real address has them, and a link does: "?id=9&e=bob%40x.com" is
# a link with an address in its query, not an address whose name starts at "//"
_LOCAL_CHARS = r"\w" + _MARK + r".%+\-!#$'*^`{|}~"
_LOCAL = r"[" + _LOCAL_CHARS + r"]*[\w" + _MARK + r"%+\-]"
_DOMAIN = (r"(?:[^\W_](?:[\w" + _MARK + r"\-]*[\w" + _MARK + r"])?\.)+(?:[^\W\d_][\w" + _MARK + r"]+|xn--[a-z0-9\-]+)")
# an image's density in its file name is no address ("logo@2x.png", "icon@3x.webp")
_FILE = r"(?<!\.(?:png|jpg|gif|svg|ico|css))(?<!\.(?:jpeg|webp|avif))"
_EMAIL_BODY = _LOCAL + r"(?:@|%40|%2540|\\u0040|\\x40|&#0*64;|&#x0*40;|&commat;)" + _DOMAIN + _FILE + r"(?![\w\-])"
# Where an address may start: not after a character of the `[\w.%+\-]` kind.
_EMAIL_RE = re.compile(r"(?<![\w.%+\-])" + _EMAIL_BODY, re.I)
# The same, looked for only where a run of local-part characters starts. Searching with _EMAIL_RE tried every
# place inside a run ("????...", no "@"), and each try ran to the run's end: quadratic, seconds on a long field.
_EMAIL_AT_RUN = re.compile(r"(?<![" + _LOCAL_CHARS + r"])" + _EMAIL_BODY, re.I)
_NO_START = re.compile(r"[\w.%+\-]*")


def _emails(text: str) -> str:
    """`_EMAIL_RE.sub(EMAIL, text)` in linear time.

    A search from a run's start reaches every end a start inside the run could, and leftmost wins: the run's start
    is the only place to try, except in the run the last address ended in ("a@b.com&c@d.com"), where the first
    place _EMAIL_RE allows is tried once.
    """
    out: list[str] = []
    last = 0
    m = _EMAIL_AT_RUN.search(text)
    while m:
        out += [text[last:m.start()], EMAIL]
        last = m.end()
        at = last
        if _NO_START.fullmatch(text, last - 1, last):  # it ended on a [\w.%+-]: _EMAIL_RE may start after the next other
            stop = _NO_START.match(text, last)
            at = (stop.end() if stop else last) + 1
        m = (at <= len(text) and _EMAIL_RE.match(text, at)) or _EMAIL_AT_RUN.search(text, last)
    return "".join(out) + text[last:] if out else text


_AT = r"\s*(?:[\(\[\{<]\s*(?:at|@|a)\s*[\)\]\}>]|\s(?:at|AT)\s|-at-|_at_|@)\s*"
_DOT = r"(?:\s*[\(\[\{<]\s*(?:dot|\.)\s*[\)\]\}>]\s*|\s+(?:dot|DOT)\s+|-dot-|_dot_|\.)"
# A host label never runs over a spelled dot ("-dot-", "_dot_") where a label could follow it: one that could doubled the ways
# to split the host at each ("x-at-a" + "-dot-1" * 20 + "-" took 2.4 s, each more one twice as long).
_LABEL = r"[^\W_](?:(?![-_]dot[-_][^\W_])[\w\-])*"
_SPELLED_RE = re.compile(r"(?<![\w.%+\-])(?P<local>[\w.%+\-][\w.%+\-']*)" + _AT + r"(?P<host>" + _LABEL + r"(?:" + _DOT
                         + _LABEL + r")*" + _DOT + r"(?P<tld>[^\W\d_]{2,}))(?![\w\-])", re.I)


def _spelled(m: re.Match[str]) -> str:
    """x(at)example.com always; the forms prose also has only with more evidence: "x at example.com" and
    "x @ Example.Com" when the name has a dot, plus or underscore (jane.doe at ...) or the host is lower case
    (jane @ example.com), "x_at_y.html" only with a spelled dot (x_at_example_dot_com)."""
    whole = m.group(0)
    at = whole[len(m.group("local")):m.start("host") - m.start()].strip().casefold()
    spelled_dot = re.search(r"\sdot\s|[\(\[\{<]\s*(?:dot|\.)\s*[\)\]\}>]|[-_]dot[-_]", whole, re.I) is not None
    local = m.group("local").strip(".'")
    local_like = any(c in local for c in "._+%") and any(c.isalpha() for c in local)
    if at[:1] in "([{<":  # "jane(a)example.com" glued only: "choose (a) example.com" is a list
        return EMAIL if at[1:-1].strip() != "a" or not re.search(r"\s", whole[len(m.group("local")):m.start("host") - m.start()]) else whole
    if at in ("-at-", "_at_"):
        return EMAIL if spelled_dot else whole
    if at == "@":
        return EMAIL if local_like or spelled_dot or m.group("host").islower() else whole
    return EMAIL if local_like or spelled_dot or _mail_evidence(local, m.group("host")) else whole


# Hosts of mail services: "write to jane at gmail.com" is an address however plain its name, unless the word before
# " at " is one prose puts there ("sign in at outlook.com", "an account at gmx.de")
_MAIL_HOST = re.compile(r"(?i)(?:(?:g(?:oogle)?mail|yahoo|ymail|outlook|hotmail|msn|icloud|aol|proton(?:mail)?|gmx|yandex"
                        r"|rambler|qq|163|126|naver|hanmail|zoho|fastmail|tutanota|libero|laposte|wanadoo|t-online"
                        r"|rediffmail|seznam)\.[a-z]{2,}(?:\.[a-z]{2})?"
                        # services known by their whole host
                        r"|(?:mail|bk|list|inbox|internet)\.ru|(?:web|freenet|posteo|arcor)\.de|mailbox\.org"
                        r"|(?:comcast|verizon|att|sbcglobal|bellsouth|cox|charter|earthlink|optonline|juno|yeah|daum"
                        r"|ukr)\.net|(?:me|mac|juno|rocketmail|btinternet|sky|virginmedia|rogers|sohu|foxmail|mail|email"
                        r"|hushmail|hey)\.com|(?:orange|free|sfr)\.fr|shaw\.ca|sympatico\.ca|bigpond\.(?:com|net\.au)"
                        r"|optusnet\.com\.au|xtra\.co\.nz|pm\.me|sina\.(?:com|cn)|(?:virgilio|alice|tiscali)\.it"
                        r"|(?:terra|uol|bol)\.com\.br|abv\.bg|(?:wp|o2|interia|onet)\.pl|(?:centrum|email)\.cz)$")
_PROSE_BEFORE_AT = frozenset(
    "in up on out me us it him her them you we they is are was were be been am here there now only also and or "
    "sign signed signing log logged logging login logon account accounts email e-mail mail inbox page site address "
    "registered register available found look looking looked arrive arrived meet go went visit visited check "
    "checked read work works working hosted host stored kept created open opened".split())


def _mail_evidence(local: str, host: str) -> bool:
    return _MAIL_HOST.match(host) is not None and local.casefold() not in _PROSE_BEFORE_AT


def _spelled_starts(text: str, starts: list[int] | None) -> list[int] | None:
    """Drop the " at " of prose ("look at the page"): kept when the word before has a dot or a plus (jane.doe at
    ...) or a "dot" follows, as in every address written out that way."""
    if starts is None:
        return None
    kept = []
    for p in starts:  # a hint's offset is that of its word: "at" of " at "
        if p and text[p - 1].isspace() and text[p:p + 3].casefold() == "at ":
            word = text[max(0, p - 65):p - 1].rsplit(None, 1)[-1:] or [""]
            after = text[p + 3:p + 40].split(None, 1)[:1] or [""]
            # an address may stand in quotes or brackets ('jane at mail.ru', [bob at comcast.net])
            if (not any(c in word[0] for c in "._+%") and "dot" not in text[p:p + 80].casefold()
                    and not _mail_evidence(word[0].lstrip("'\"([{<"), after[0].rstrip(".,;:!?)]}>'\""))):
                continue
        kept.append(p)
    return kept


_SPELLED_HINTS = ("(at", "[at", "{at", "<at", "(@", "[@", "(a)", "[a]", "{a}", "<a>", " at ", "-at-", "_at_", " @", "@ ")


# where each detector here is looked for (`condenser.scan.Hints`)
HINTS = {
    "email": ("@", "%40", "%2540", "\\u0040", "\\x40", "&#64;", "&#x40;", "&#0", "&#x0", "&commat;"),
    "spelled_email": _SPELLED_HINTS,
}


def redact_emails(text: str, hits: Hits | None) -> str:
    """`text` with its e-mail addresses replaced by [EMAIL]; `hits` from `Hints.find` (None: look everywhere)."""
    came = text
    if hits is None or "email" in hits:
        text = _emails(text)
    if hits is None or "spelled_email" in hits:
        # the offsets are of the text as it came: once a replacement moved them, look everywhere
        starts = None if hits is None or text != came else hits.get("spelled_email", [])
        text = substitute_at(text, _SPELLED_RE, _spelled, _spelled_starts(text, starts), back=64, ahead=300)
    return text
