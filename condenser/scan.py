"""Where to look: one Aho-Corasick pass finds every hint word of every detector, so a detector runs only at the
places its hints occur instead of running its pattern over the whole text.

Measured on the 32,152 dev texts (1705 runs): checking 47 hint words one `in` at a time took 335 ms, one regex
alternation of them 2.3 s under IGNORECASE, the automaton 24 ms for all hints of all detectors at once.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping

import ahocorasick_rs

Hits = dict[str, list[int]]
SEPARATOR = "\x00"  # between the texts of one `find_many` pass
# What may stand before a word: a hint "<one of these><word>" finds the word at its start only
WORD_STARTS = (" ", "\n", "\t", "_", "-", ".", ",", ";", ":", "=", "?", "&", "#", "/", "(", "[", "{", "<", ">", "*",
               "|", '"', "'", "`")


class Hints:
    """Finds, in one pass over the case-folded text, where each group's hint words start.

    A hint may begin with one character that is not a letter or digit (" pin", "_pin", "(sin"): it says the word
    starts there, so "shopping" or "business" are no hint; the offset reported is the word's, and the text is
    searched with a space before it so that a word at its very start counts too.
    """

    def __init__(self, groups: Mapping[str, Iterable[str]]) -> None:
        words = [(group, word.casefold()) for group, group_words in groups.items() for word in group_words]
        self._groups = [group for group, _ in words]
        self._shift = [0 if word[0].isalnum() else 1 for _, word in words]  # from the hint's start to the word's
        if any(SEPARATOR in word for _, word in words):
            raise ValueError("a hint word may not hold the separator of find_many")
        self._automaton = ahocorasick_rs.AhoCorasick([word for _, word in words])

    def find(self, text: str) -> Hits | None:
        """Start offsets of the hint words, by group (where case folding changes a text's length, ß -> ss, İ -> i̇, the
        offsets are mapped back: a None, "look everywhere", let one such character turn every hint-bound detector
        into a scan of the whole text from every place)."""
        return self.find_many([text])[0]

    def find_many(self, texts: list[str]) -> list[Hits | None]:
        """`find` for each of `texts`, in one pass of the automaton over the texts joined by SEPARATOR (no hint
        holds it, so no match spans two texts). One call, not one per text: the automaton releases the GIL for
        each call, and under concurrent requests each call then waits for the GIL again (a few µs alone, tens
        to hundreds of µs with busy threads, measured here), so a run's dozen fields cost one wait."""
        out: list[Hits | None] = [None] * len(texts)
        parts: list[str] = []
        bases: list[int] = []  # where each searched text's " " starts in the joined haystack
        which: list[int] = []  # its index in `texts`
        back: dict[int, list[int]] = {}  # a text whose folding changed its length: folded offset -> its offset
        at = 0
        for i, text in enumerate(texts):
            folded = text.casefold()
            if len(folded) != len(text):  # ß -> ss, İ -> i̇: fold character by character, keeping where each came from
                pieces = [c.casefold() for c in text]
                folded = "".join(pieces)
                back[len(which)] = [j for j, piece in enumerate(pieces) for _ in piece] + [len(text)]
            out[i] = {}
            parts.append(" " + folded)
            bases.append(at)
            which.append(i)
            at += len(folded) + 2  # " " + the text + SEPARATOR
        if not parts:
            return out
        groups, shift = self._groups, self._shift
        matches = self._automaton.find_matches_as_indexes(SEPARATOR.join(parts), overlapping=True)
        for index, start, _ in matches:
            k = bisect_right(bases, start) - 1
            hits = out[which[k]]
            assert hits is not None  # only searched texts have a base
            offset = max(0, start - bases[k] - 1 + shift[index])
            hits.setdefault(groups[index], []).append(back[k][offset] if k in back else offset)
        return out


def literal_finder(words: list[str]) -> Callable[[str], list[tuple[int, int, int]]]:
    """A function giving (index in `words`, start, end) of every occurrence of each word in a text, overlapping
    ones included, in one pass."""
    automaton = ahocorasick_rs.AhoCorasick(words, matchkind=ahocorasick_rs.MatchKind.Standard)
    return lambda text: automaton.find_matches_as_indexes(text, overlapping=True)


def substitute_at(text: str, pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str],
                  starts: list[int] | None, *, back: int = 0, ahead: int = 400,
                  head: re.Pattern[str] | None = None) -> str:
    """`pattern.sub(replace, text)`, but only for matches that begin at one of `starts`, or up to `back`
    characters before one (looked for within `ahead` characters after it). `starts` None: everywhere.

    With `head` (how a match begins), a match is tried only where `head` begins near the start: for a pattern that
    may run to the end of the text, searching from every start to there was quadratic. Without it, hints so dense
    that their windows would scan the text over four times make one pass over the whole text instead (95 KB of
    "x at b." took 1 s in 13,570 windows)."""
    if starts is not None and back and head is None and len(starts) * (back + ahead) > 4 * len(text):
        starts = None  # windows that overlap this much (a text of hint after hint) cost more than one pass over it
    if starts is None:
        return pattern.sub(replace, text)
    out: list[str] = []
    last = 0
    for start in sorted(set(starts)):
        if start < last:
            continue
        if head is not None:
            begins = (h.start() for h in head.finditer(text, max(last, start - back), min(len(text), start + 40)))
            m = next((m for b in begins if b <= start and (m := pattern.match(text, b, min(len(text), start + ahead)))),
                     None)
            if m is None:
                continue
        elif back:
            m = pattern.search(text, max(last, start - back), min(len(text), start + ahead))
            if m is None or m.start() > start:
                continue
        else:
            m = pattern.match(text, start)
            if m is None:
                continue
        new = replace(m)
        if new != m.group(0):
            out += [text[last:m.start()], new]
            last = m.end()
    return "".join(out) + text[last:] if out else text


def nocase(pattern: str) -> str:
    """`pattern` with each letter as a class of both cases ([pP]): the engine then skips ahead by first character,
    which it cannot do under IGNORECASE (12x slower on the dev texts)."""
    out, in_class, i = [], False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
        elif c == "]" and in_class:
            in_class = False
            out.append(c)
        elif c.lower() != c.upper() and len(c.upper()) == 1:
            out.append(c.lower() + c.upper() if in_class else f"[{c.lower()}{c.upper()}]")
        else:
            out.append(c)
        i += 1
    return "".join(out)
