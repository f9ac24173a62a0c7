"""Characters that imitate others: Latin look-alikes of other scripts, dashes, dots, colons, digits of other scripts.

One home for the table the coach folds labels with (`coach.words`) and the redactor folds text with before it looks
for secrets (`normalize`, below): "Pаssword" with a Cyrillic а, "415–555–0199" with en dashes,
"alice@victim。com", "password∶ x" with a ratio sign, a card number in Arabic-Indic digits.
"""

from __future__ import annotations

import re
import unicodedata

# Latin look-alikes (Cyrillic, Greek, Armenian, small capitals, IPA, Cherokee).
CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁԛԝһӏгпьвкмнтАВЕКМНОРСТУХІЈЅαβεικνορτυχγηωΑΒΕΖΗΙΚΜΝΟΡΤΥΧօոռհցզսաեıɑɩɪȷʀʏᴀʙᴄᴅᴇꜰɢʜᴊᴋʟᴍɴᴏᴘǫꜱᴛᴜᴠᴡᴢℓ",
    "aeopcyxijsdqwhlrnbbkmhtABEKMHOPCTYXIJSabeikvoptyxynwABEZHIKMNOPTYXonnhgquweiaiijryabcdefghjklmnopqstuvwzl")
# Latin letters that carry their mark inside them, so NFKD leaves them whole: read as the letter they stand in for
# ("Ignøre", "Disregarđ", "Førget", "Ignœre", "Disregærd"). Not look-alikes (Danish "Søg" is a word): the coach
# folds them only where it reads a text for what it spells (`coach.words`, `coach.steering`).
BUILT_IN_MARKS = str.maketrans({"ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "ħ": "h", "Ħ": "H",
                                "ł": "l", "Ł": "L", "ŀ": "l", "Ŀ": "L", "ŧ": "t", "Ŧ": "T", "ĸ": "k", "ŋ": "n",
                                "Ŋ": "N", "œ": "o", "Œ": "O", "æ": "a", "Æ": "A", "þ": "th", "Þ": "TH",
                                "ß": "ss", "ı": "i", "ȷ": "j"})
# Punctuation that NFKC leaves alone but that reads as its ASCII twin: hyphens, dashes and minus signs, full stops
# and middle dots, colons, arrows.
PUNCTUATION = str.maketrans({
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58\ufe63\uff0d\u2e3a\u2e3b", "-"),
    **dict.fromkeys("\u3002\uff61\ufe52\u2024\u0701\u0702\u06d4\u0964\u00b7\u2219\u22c5\u2027", "."),
    **dict.fromkeys("\u2236\ua789\u02d0\u02f8\u0589\u05c3\u1361\ufe13\ufe55\uff1a", ":"),
    "\u2192": "->", "\u21d2": "=>", "\u27f6": "->", "\u2794": "->", "\u279c": "->",
})
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")  # a decimal digit of another script (Arabic-Indic, Devanagari, ...)
_MARKED_DIGIT = re.compile(r"(?<=\d)[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_LOOKALIKE = "[" + re.escape("".join(map(chr, CONFUSABLES))) + "]"
_MIXED = re.compile(f"[A-Za-z]{_LOOKALIKE}|{_LOOKALIKE}[A-Za-z]")  # a look-alike letter beside a Latin one
_WORD = re.compile(r"\w")


def ascii_digits(text: str) -> str:
    """Decimal digits of every script as ASCII digits (٤١١١ -> 4111), without combining marks put on them."""
    return _OTHER_DIGIT.sub(lambda m: str(unicodedata.digit(m.group(0))), _MARKED_DIGIT.sub("", text))


def fold_mixed_words(text: str) -> str:
    """Words that mix Latin letters with look-alikes of other scripts ("Pаssword" with a Cyrillic а, "ΡASSWORD"
    with a Greek Ρ, "passwօrd" with an Armenian օ, "ᴘassword") folded to Latin; a word in one script is left alone
    (a Russian word stays Russian). Linear: each word is folded once."""
    out, last = [], 0
    for m in _MIXED.finditer(text):
        if m.start() < last:  # inside a word already folded
            continue
        start, end = m.start(), m.end()
        while start > last and _WORD.match(text, start - 1):
            start -= 1
        while end < len(text) and _WORD.match(text, end):
            end += 1
        out += [text[last:start], text[start:end].translate(CONFUSABLES)]
        last = end
    return "".join(out) + text[last:] if out else text


# Characters that render as nothing (or as a blank) but split a number or a word for a pattern: soft hyphen,
# combining grapheme joiner, Hangul and Khmer fillers, Mongolian selectors and vowel separator, braille blank,
# zero-width space / (non-)joiner, LRM / RLM, bidi embeddings and isolates, word joiner and invisible operators,
# ALM, variation selectors, tag characters, BOM.
_INVISIBLE = dict.fromkeys(
    [0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x180F), 0x2800, 0x3164, 0xFEFF, 0xFFA0,
     *range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x2070), *range(0xFE00, 0xFE10),
     *range(0xE0000, 0xE0080)]
)


def normalize(text: str) -> str:
    """NFKC without invisible format characters (full-width digits -> ASCII, NBSP -> space, ＠ -> @), then what NFKC
    leaves: dashes, full stops and colons of other forms as ASCII, digits of other scripts as ASCII digits, words
    that mix Latin with Greek or Cyrillic look-alikes folded to Latin (`condenser.lookalikes`)."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text.translate(_INVISIBLE)).translate(PUNCTUATION)
    return fold_mixed_words(ascii_digits(text)) if not text.isascii() else text
