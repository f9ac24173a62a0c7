"""Tokens in links whose names are no secret words: an OAuth code, a reset or magic link's token, a ticket, a session
id (`?code=`, `oobCode=`, `;jsessionid=`), in a query or in the path (`/reset-password/<token>`). Only values that
look generated are taken; slugs, search words and chain addresses stay. Called from `condenser.credentials`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from condenser.placeholders import PLACEHOLDER, SECRET
from condenser.scan import substitute_at

# A URL's token-bearing parameter whose name is no secret word: an OAuth code, a reset or magic link, a ticket, a
# session id in the path (";jsessionid="). Taken when the value looks generated (12+ characters, letters and digits).
_URL_TOKEN = re.compile(r"(?i)(?<=[?&;#])(?P<name>code|oobcode|oob_code|t|tk|sig|auth|otp|reset|verify"
                        r"|magic|login_token|jwt|jsessionid|phpsessid|aspsessionid\w*|sessid|ticket|oauth_verifier"
                        r"|invite|activation|activation_key|nonce)=(?P<val>[^&#\s\]\)'\"]{12,})")
# The same in a link's path: /reset-password/<token>, /verify/<id>/<hash>, /magic-link/<token>
_URL_PATH_TOKEN = re.compile(r"(?i)(?<=/)(?P<name>reset(?:[-_]?password)?|password[-_]?reset|(?:set|new|change)[-_]password"
                             r"|verify(?:[-_]?(?:email|account))?|email/verify|confirm(?:[-_]?(?:email|account))?"
                             r"|confirmation|activate|activation|magic(?:[-_]?(?:link|login))?|invite|invitation|login[-_]token"
                             r"|auth[-_]token|token|unlock|passwordless|recover|recovery|login)/"
                             # an id before the token: digits, or Django's base64 user id (/reset/MQ/<token>/)
                             r"(?:[A-Za-z0-9_-]{1,12}/(?=[A-Za-z0-9_\-.~%]{16,}))?"
                             r"(?P<val>[A-Za-z0-9_\-.~%]{16,})")


def _generated(value: str) -> bool:
    """A value made by a machine rather than words: letters with digits, or long; not a slug (how-to-reset-it)."""
    if re.fullmatch(r"0x[0-9a-fA-F]{40}", value):
        return False  # a public address on a chain (/token/0xdac17f...)
    parts = [p for p in re.split(r"[-_.~]", value) if p]
    words = sum(1 for p in parts if p.isalpha() and len(p) >= 2)
    slug = len(parts) >= 2 and words * 2 >= len(parts)  # ethereum-erc20-guide, friends-and-family-2024
    mixed = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    return not slug and (mixed or len(value) >= 24)


def _url_token(m: re.Match[str]) -> str:
    value = m.group("val")
    generated = (any(c.isdigit() for c in value) and any(c.islower() for c in value)) or len(value) >= 24
    # (upper case letters and digits alone, "SUMMER2024SALE", name a promotion)
    session = m.group("name").lower() in {"jsessionid", "phpsessid", "sessid"} or m.group("name").lower().startswith("aspsessionid")
    # a search's words ("Samsung+8K+TV"), not a generated token (one with "+" in it: a piece of 12+ letters and digits)
    parts = [p for p in re.split(r"\+|%20", value) if p]
    words = ("+" in value or "%20" in value) and sum(1 for p in parts if p.isalpha() or p.isdigit()) * 2 >= len(parts)
    if words or not (generated or session or len(value) >= 24) or PLACEHOLDER.match(value):
        return m.group(0)
    return m.group("name") + "=" + SECRET


def _url_path_token(m: re.Match[str]) -> str:
    value = m.group("val")
    if not _generated(value) or PLACEHOLDER.match(value):
        return m.group(0)
    return m.group(0)[: m.start("val") - m.start()] + SECRET


# where each detector here is looked for (`condenser.scan.Hints`)
HINTS = {
    "url_path": tuple(f"/{word}" for word in ("reset", "password", "verify", "confirm", "activat", "magic", "invit",
                                               "login", "auth-token", "auth_token", "token/", "unlock", "passwordless",
                                               "email/verify", "set-password", "set_password", "new-password",
                                               "change-password", "recover")),
}


def may_carry_query_token(text: str) -> bool:
    """Whether `text` could hold a token in a link's query or fragment (the one detector here that needs no hint)."""
    return "=" in text and ("?" in text or ";" in text or "#" in text)


def redact_url_tokens(text: str, starts: Callable[[str, str], list[int] | None]) -> str:
    """`text` with the generated tokens of its links replaced by [SECRET]; `starts(text, group)`: where a group's
    hints are in `text` as it is now (None: look everywhere; []: nowhere)."""
    if may_carry_query_token(text):
        text = _URL_TOKEN.sub(_url_token, text)
    if starts(text, "url_path") != []:
        text = substitute_at(text, _URL_PATH_TOKEN, _url_path_token, starts(text, "url_path"))
    return text
