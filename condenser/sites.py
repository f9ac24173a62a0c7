"""Registrable domains ("eTLD+1"): what "the same site" means, from the public suffix list."""

from __future__ import annotations

from functools import lru_cache

from publicsuffixlist import PublicSuffixList

_PSL = PublicSuffixList()  # the list bundled with the package: no network


@lru_cache(maxsize=65536)
def registrable_domain(host: str | None) -> str | None:
    """`shop.example.co.uk` -> `example.co.uk`; an IP address or a bare name is returned as it is."""
    if not host:
        return None
    h = host.strip().lower().rstrip(".")
    if h.startswith("www."):
        h = h[4:]
    if ":" in h or h.replace(".", "").isdigit():  # an IP address: its own site
        return h
    return _PSL.privatesuffix(h) or h


@lru_cache(maxsize=4096)
def is_public_suffix(label: str) -> bool:
    """Whether `label` (one label, `to`, `lol`, `co.uk`) is a public suffix: a TLD any host may end in."""
    return bool(label) and _PSL.is_public(label.lower())
