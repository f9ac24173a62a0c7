"""The middleware's quick look for a NUL or a lone surrogate in a body: never misses what the exact pattern finds."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from ems_service.middleware import _SUSPECT, suspect

_PIECES = st.sampled_from([b"\\u0000", b"\\ud83d", b"\\uD83D", b"\\ude00", b"\\uDE00", b"\\udbff", b"\\udc00", b"\\u00e9",
                           b"\\u0041", b"\\\\", b"\\u", b"\\ud", b"a", b" ", b'"', b"\\ufffd", b"\\uDbFf"])


@given(st.lists(_PIECES, max_size=12))
def test_the_prefilter_agrees_with_the_exact_pattern(pieces):
    body = b"".join(pieces)
    assert suspect(body) == (_SUSPECT.search(body) is not None)


def test_real_bodies_are_told_apart():
    assert not suspect(json.dumps({"task": "café 😀 ok"}).encode())  # a pair, escaped by json.dumps
    assert suspect(json.dumps({"task": "a\x00b"}).encode())
    assert suspect(b'{"task": "\\ud83d alone"}')
    assert suspect(b'{"task": "\\uDE00 alone"}')
    assert not suspect(b'{"task": "plain ascii, no escapes"}')
