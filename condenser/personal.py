"""Personal data: e-mail addresses (`condenser.emails`), IBANs, national ids, card numbers and phone numbers.

Checksums and numbering plans come from maintained libraries: `phonenumbers` (Google's libphonenumber metadata)
says whether a candidate is a real number of some country, `python-stdnum` whether it is a valid IBAN (mod 97 and
the country's format) or national id (check digits, birth dates). The patterns here only find candidates; each
runs behind a cheap necessary condition (a digit count, or hint words found by `condenser.scan.Hints`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable

import phonenumbers
from stdnum import iban, luhn
from stdnum.br import cpf
from stdnum.ch import ssn as ch_ssn
from stdnum.cn import ric
from stdnum.dk import cpr
from stdnum.es import dni, nie
from stdnum.fi import hetu
from stdnum.fr import nir
from stdnum.in_ import aadhaar, pan
from stdnum.it import codicefiscale
from stdnum.kr import rrn
from stdnum.mx import curp
from stdnum.se import personnummer
from stdnum.us import itin, ssn

from condenser import emails
from condenser.placeholders import CARD, IBAN, NATIONAL_ID, PHONE
from condenser.scan import WORD_STARTS, Hits, substitute_at

# -- numbers: IBANs, national ids, card numbers, phone numbers ------------------------------------------------

# Starts at the check digits (a digit: the engine skips letters fast), the country code looked at behind them
_IBAN_RE = re.compile(r"\d\d(?<=[A-Za-z]{2}\d\d)(?:[ \-]?[A-Za-z0-9]){10,32}(?![A-Za-z0-9])")


_BASE36 = str.maketrans({chr(c): str(c - 55) for c in range(ord("A"), ord("Z") + 1)})


def _iban_valid(candidate: str) -> bool:
    """`iban.is_valid`, after the ISO 7064 mod 97-10 check it starts with, done first in C: a run of country codes
    and digits ("GB82 GB82 ...") offers up to 20 candidates at each code, and the library's own check cost about
    15 µs a character of such text."""
    if candidate.isascii():
        compact = candidate.replace(" ", "").replace("-", "").upper()
        if not compact.isalnum() or int((compact[4:] + compact[:4]).translate(_BASE36)) % 97 != 1:
            return False
    return _passes(iban.is_valid, candidate)


def _ibans(text: str) -> str:
    """Each longest valid IBAN (the candidate may run on into a BIC or other words)."""
    out: list[str] = []
    last = 0
    for m in _IBAN_RE.finditer(text):
        start = m.start() - 2
        if start < last or (start and text[start - 1].isalnum()):
            continue
        raw = text[start:m.end()]
        ends = [i + 1 for i, c in enumerate(raw) if c.isalnum()]
        for n in range(min(34, len(ends)), 14, -1):
            if _iban_valid(raw[: ends[n - 1]]):
                out += [text[last:start], IBAN]
                last = start + ends[n - 1]
                break
    return "".join(out) + text[last:] if out else text


# Ids whose written form is distinctive enough to redact on a valid checksum alone; the others (plain runs of
# digits that an order or tracking number may also be) only after a word that names them. One alternation, so
# a text is scanned once; the group that matched says which check applies.
_ID_FORMS: dict[str, tuple[str, Callable[[str], bool]]] = {
    "us": (r"\b\d{3}[- ]\d{2}[- ]\d{4}\b", lambda v: ssn.is_valid(v) or itin.is_valid(v)),
    # UK: no check digit, and any two capitals (QQ, reserved for examples, is what documents and tests use)
    "nino": (r"\b[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b", lambda v: True),
    "dni": (r"\b\d{8}-?[A-Z]\b", dni.is_valid),
    "nie": (r"\b[XYZ]-?\d{7}-?[A-Z]\b", nie.is_valid),
    "cf": (r"\b[A-Z]{6}\d{2}[A-Z]\d{2}[A-Z]\d{3}[A-Z]\b", codicefiscale.is_valid),
    "cpf": (r"\b\d{3}\.\d{3}\.\d{3}-\d{2}\b", cpf.is_valid),
    "aadhaar": (r"\b[2-9]\d{3} \d{4} \d{4}\b", aadhaar.is_valid),
    "pan": (r"\b[A-Z]{3}[PCHFATBLJG][A-Z]\d{4}[A-Z]\b", pan.is_valid),
    "curp": (r"\b[A-Z]{4}\d{6}[HM][A-Z]{5}[A-Z0-9]\d\b", curp.is_valid),
    "hetu": (r"\b\d{6}[-+A]\d{3}[0-9A-Y]\b", hetu.is_valid),
    "rrn": (r"\b\d{6}-\d{7}\b", rrn.is_valid),
    # a Danish number with no name before it only when its old check digit holds: any date and four digits is also
    # an invoice's or a case's reference ("Invoice 240315-0042")
    "nordic": (r"\b(?:\d{2})?\d{6}[-+]\d{4}\b", lambda v: personnummer.is_valid(v) or _cpr_checked(v)),
    "ric": (r"\b\d{17}[\dXx]\b", ric.is_valid),
    "nir": (r"\b[12] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}\b", nir.is_valid),
    "ahv": (r"\b756\.\d{4}\.\d{4}\.\d{2}\b", ch_ssn.is_valid),
}
def _cpr_checked(value: str) -> bool:
    number = cpr.compact(value)
    return cpr.is_valid(number) and cpr.checksum(number) == 0


_ID_RE = re.compile("|".join(f"(?P<{name}>{pattern})" for name, (pattern, _) in _ID_FORMS.items()))
# Candidates for the forms above start at a digit (the engine skips everything else fast); the capitals some
# forms begin with (AB 12 34 56 C, X1234567L, RSSMRA85T10A562S) are taken in when looking behind the digit.
_ID_CANDIDATE = re.compile(r"\d[\dA-Z .\-+]{3,22}[\dA-Z]")
_ID_WORDS = re.compile(
    r"(?i)\b(?:ssn|social security(?: number| no\.?)?|social insurance(?: number)?|sin|itin|national (?:id|identity"
    r"|insurance)(?: number| no\.?| card)?|nino|tax (?:id|identification)(?: number)?|tin|steuer-?id"
    r"|identifikationsnummer|idnr|personalausweis(?:nummer)?|bsn|burgerservicenummer|pesel|cpf|aadhaar"
    r"|personnummer|cpr|fødselsnummer|fodselsnummer|henkilötunnus|hetu|nir|insee|codice fiscale|dni|nie|nif"
    r"|curp|rrn|resident registration number|tc kimlik(?: no)?|kimlik|id card(?: number| no\.?)?|identity card"
    r"(?: number| no\.?)?|passport(?: number| no\.?)?|身份证号?码?|주민등록번호|マイナンバー|个人番号"
    r"|id (?:number|no\.?)|identity number|personal (?:id|identification) number|nric|tfn|hkid|medicare number"
    r"|driver'?s? licen[cs]e(?: number| no\.?)?|driving licen[cs]e(?: number| no\.?)?|licen[cs]e number|dl (?:number|no\.?)"
    r"|routing (?:number|no\.?)|aba(?: number)?|sort code|(?:bank )?account (?:number|no\.?)|acct (?:number|no\.?|#)"
    r"|bsb|clabe|member(?:ship)? (?:id|number)|patient id|health (?:card|insurance) number|nhs number"
    r"|nik|ktp|инн|снилс|cnic|rut|cuit|cuil|bvn|emirates id|iqama(?: number)?|voter id|ppsn|pps number|ird number"
    r"|tax file number|employer identification number|c[ée]dula(?: de identidad)?|n[úu]mero de identificaci[óo]n"
    r"|carte d'identit[ée]|sozialversicherungsnummer|num[ée]ro de s[ée]curit[ée] sociale|номер паспорта|паспорт)(?!\w)"
    r"(?P<gap>[\s:#=\-–—]*(?:(?:is|was|number|no\.?|nr\.?|of)[\s:#=]+)*)"
    r"(?P<val>[A-Za-z0-9][A-Za-z0-9 .\-/]{3,22}[A-Za-z0-9])")
_ID_HINTS = ("ssn", "social", "itin", "national", "nino", "tax", "steuer", "idnr", "identifik", "ausweis",
             "burgerservice", "pesel", "aadhaar", "personnummer", "fødsels", "fodsels", "henkilö", "hetu", "insee",
             "codice", "curp", "resident", "kimlik", "id card", "identity", "passport", "身份证", "주민등록번호",
             "マイナンバー", "个人番号", "id number", "id no", "identity number", "identification number", "nric", "tfn",
             "hkid", "medicare", "licence", "license", "dl number", "dl no", "routing", "aba", "sort code",
             "account number", "account no", "acct", "bsb", "clabe", "member id", "membership", "member number",
             "patient id", "health card", "health insurance number", "nhs number", "инн", "снилс", "cnic", "cuit",
             "cuil", "emirates id", "iqama", "voter id", "ppsn", "pps number", "ird number", "tax file number",
             "employer identification", "cédula", "cedula", "identificación", "identificacion", "carte d'identit",
             "sozialversicherungsnummer", "sécurité sociale", "securite sociale", "паспорт",
             *(f"{start}{word}" for start in WORD_STARTS for word in ("sin", "tin", "bsn", "cpf", "cpr", "nir", "dni",
                                                                     "nie", "nif", "rrn", "nik", "ktp", "rut",
                                                                     "bvn")))
# Words after which a national number of any country may be a phone number
_PHONE_HINTS = ("phone", "mobile", "whatsapp", "contact", "hotline", "telefon", "téléphone", "teléfono", "telefone",
                "telefono", "numéro", "rufnummer", "número", "móvil", "handy", "portable", "電話", "电话", "手机",
                "телефон", "전화", *(f"{start}{word}" for start in WORD_STARTS for word in ("tel ", "tel:", "tel.", "cell",
                                                                                  "call", "fax", "sms", "my number",
                                                                                  "number to", "reach me", "text me",
                                                                                  "ring me", "dial ", "dial:")))


_ID_FULL = [(re.compile(pattern), valid) for pattern, valid in _ID_FORMS.values()]


def _passes(check: Callable[[str], bool], value: str) -> bool:
    """`check(value)`, a library's checksum; one that raises counts as passing (python-stdnum's Chinese RIC raised
    KeyError on 411333550011110000): a value that fits the form is then redacted, and the route does not fail."""
    try:
        return bool(check(value))
    except Exception:  # noqa: BLE001 - any failure of the library: fail closed
        return True


def _id_form(m: re.Match[str]) -> str:
    """Every form the text fits is tried (800608-8911 is shaped like a Finnish HETU but is a Swedish number)."""
    value = m.group(0)
    fits = any(pattern.fullmatch(value) and _passes(valid, value) for pattern, valid in _ID_FULL)
    return NATIONAL_ID if fits else value


def _ids(text: str) -> str:
    """Every national id of a distinctive form (see `_ID_FORMS`) with a valid checksum."""
    out: list[str] = []
    last = 0
    for m in _ID_CANDIDATE.finditer(text):
        start, end = m.start(), m.end()
        if start > 1 and text[start - 1] in " -" and text[start - 2].isupper():
            start -= 1
        while start > 0 and text[start - 1].isupper() and m.start() - start < 7:
            start -= 1
        if start < last or (start and (text[start - 1].isalnum() or text[start - 1] in "_.-")) or (
                end < len(text) and (text[end].isalnum() or text[end] == "_")):
            continue  # a part of a longer token
        candidate = text[start:end]
        new = _ID_RE.sub(_id_form, candidate)
        if new != candidate:
            out += [text[last:start], new]
            last = end
    return "".join(out) + text[last:] if out else text


def _named_id(m: re.Match[str]) -> str:
    """The value after a word that names a national id: redacted when it has digits enough to be one."""
    value = m.group("val")
    if sum(c.isdigit() for c in value) < 5 or _NOT_PERSONAL.search(m.string, max(0, m.start() - 16), m.start()):
        return m.group(0)  # "Order ID number: 112-...": an order's, a product's number
    return m.group(0)[: m.start("val") - m.start()] + NATIONAL_ID


_NOT_PERSONAL = re.compile(r"(?i)\b(?:order|tracking|product|item|model|part|invoice|booking|reservation|confirmation"
                           r"|ticket|case|transaction|shipment|package|parcel)\s*$")


# A run of digit groups with single separators; one inside a longer token (a UUID, a hex hash) is left alone
# (a comma only alone: "4111,1111 1111,1111" is one card, "4000, 4100, 4200" a list)
# (the lookahead, 13 characters a run could be made of, lets a shorter run be passed over in C: `_cards` left every
# run under 13 characters as it was, one Python call each, and an agent's thoughts are full of coordinates and ids)
_DIGIT_RUN = re.compile(r"(?=[\d \-._/|*,]{13})\d+(?:(?:[ \-._/|*]{1,3}|,)\d+)*")  # 4111/1111/1111/1111, 4111 | 1111
_ISSUER = re.compile(r"(?:4|5|2[2-7]|3[045-9]|6)")


def _in_token(text: str, start: int, end: int) -> bool:
    """Whether digits at text[start:end] continue a longer token with digits of its own, as in a UUID or a hash
    (2705de3e-4461-4668-8573-8f10c1eb6641); a word before them is a prefix (Visa-4111..., card:4111...)."""
    if end < len(text) and (text[end].isalnum() or (text[end] in "-._" and text[end + 1:end + 2].isalnum()
                                                   and any(c.isdigit() for c in text[end + 1:end + 12]))):
        return True
    if start > 1 and text[start - 1] in "-._":
        i = start - 1
        while i > 0 and text[i - 1].isalnum():
            i -= 1
        return any(c.isdigit() for c in text[i:start - 1])
    return False


# Four groups of four digits and a last of 1-7, the same separator between them: one mark (a comma, a plus, a
# middle dot) or a run of blanks (a newline, several spaces); 4111,1111,1111,1111 is no list of numbers, while
# "4000, 4100, 4200, 4500" (a mark and a space) stays a list. Spaced groups may run into the next label, as page
# text does ("4111 1111 1111 1111Expiry"); marked ones may not (a UUID's 4461-4668-8573-8f10...).
_GROUPED = re.compile(r"(?<!\d)(\d{4})(\s{1,4}|[^\w\s])(\d{4})\2(\d{4})\2(\d{1,7})(?!\d)")


def _grouped_card(m: re.Match[str]) -> str:
    digits = "".join(m.group(1, 3, 4, 5))
    text, end = m.string, m.end()
    spaced = m.group(2).isspace()
    glued = end < len(text) and text[end].isalnum()
    if (glued and not spaced) or _in_token(text, m.start(), len(text) if glued else end):
        return m.group(0)  # a part of an id (a UUID's 4461-4668-8573-8f10...)
    if 13 <= len(digits) <= 19 and _ISSUER.match(digits) and _passes(luhn.is_valid, digits):
        return CARD
    return m.group(0)


def _cards(m: re.Match[str]) -> str:
    """Every Luhn-valid 13-19 digit span of whole groups whose first digits name a card issuer (ISO/IEC 7812)."""
    run, text, start, end = m.group(0), m.string, m.start(), m.end()
    if len(run) < 13 or _in_token(text, start, end):
        return run
    groups = [(g.start(), g.end()) for g in re.finditer(r"\d+", run)]
    out, i, last = [], 0, 0
    while i < len(groups):
        found, digits = None, ""
        if not _ISSUER.match(run, groups[i][0]):  # no card starts here: its first digits name no issuer (cheap, and
            i += 1  # "1 1 1 ..." of 8,000 characters took 24 ms, tried at every group)
            continue
        for j in range(i, len(groups)):  # the longest span of 13-19 digits from group i that is a card
            digits += run[groups[j][0]:groups[j][1]]
            if len(digits) > 19:
                break
            if len(digits) >= 13 and _ISSUER.match(digits) and _passes(luhn.is_valid, digits):
                found = j
        if found is None:
            i += 1
            continue
        out += [run[last:groups[i][0]], CARD]
        last, i = groups[found][1], found + 1
    return "".join(out) + run[last:] if out else run


_PHONE_RE = re.compile(r"(?:\+\s?|%2[Bb])?(?:\(\d{1,5}\)\s?|\d)[\d \-.()/]{5,22}\d")
_PHONE_WORD = (r"phone|\btel\b|telephone|mobile|\bcell|\bcall|\bfax|whatsapp|\bsms|contact|hotline|telefon|téléphone"
               r"|teléfono|telefone|telefono|numéro|rufnummer|número|móvil|handy|portable|電話|电话|手机|телефон|전화"
               r"|\bmy (?:\w+ )?number|\bnumber to (?:call|text)|\breach me|\btext me|\bring me|\bdial")
_PHONE_WORDS = re.compile(r"(?i)(?:" + _PHONE_WORD + ")")
# A number glued to the word before it ("Phone4155550199", "tel+4415..."): a phone number only after a phone word
_GLUED_WORD = re.compile(r"(?i)(?:phone|tel|telephone|mobile|cell|call|fax|whatsapp|sms|contact|hotline|telefon"
                         r"|handy)(?:\s*(?:no|nr|number|#))?[\s:.#\-]*$")
# Messenger links whose path is an international number without its "+" (wa.me/14155550199)
_LINKED = re.compile(r"(?i)(?:wa\.me/|api\.whatsapp\.com/send/?\?phone=|whatsapp://send/?\?phone=)$")
_PHONE_REGIONS = ("US", "GB", "DE", "FR", "IN", "ES", "IT", "NL", "BR", "AU", "JP", "CN", "MX", "CA", "SE",
                  "PL", "CH", "BE", "AT", "IE", "RU", "KR", "ZA", "PT", "NO", "DK", "FI", "SG", "NZ")
_NANP = re.compile(r"(?:\+?1[ .\-]?)?(?:\(\d{3}\) ?|\d{3}[ .\-])\d{3}[ .\-]\d{4}")
_DATE = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}")


def _valid_phone(candidate: str, regions: tuple[str, ...]) -> bool:
    for region in regions:
        try:
            if phonenumbers.is_valid_number(phonenumbers.parse(candidate, region)):
                return True
        except phonenumbers.NumberParseException:
            continue
        except Exception:  # noqa: BLE001 - any other failure of the library: fail closed, as `_passes`
            return True
    return False


PHONE_CHECKS = 64  # national numbers after a phone word checked against every region, a text; the rest redacted


_PRODUCT_NUMBER = re.compile(r"(?i)\b(?:item|sku|ean|upc|gtin|isbn|asin|model|part|mpn|article|art|order|invoice"
                             r"|tracking|serial|barcode|product|catalog|catalogue|style|lot|batch|pack|vin)"
                             r"\s*(?:#|no\.?|nr\.?|number|num|code|id)?\s*[:#]?\s*$")


def _phones(text: str, words: list[int] | None) -> str:
    """International numbers (+, 00) valid anywhere; national ones of many countries after a word such as
    "phone" or "tel"; else only numbers written the North American way ((415) 555-2671, 415-555-2671). Past
    PHONE_CHECKS such numbers in one text, the rest are redacted unchecked (fail closed: a text of thousands of them
    cost over a second)."""
    near = sorted(words) if words is not None else None  # looked up by bisection: a text of many words and numbers
    checks = [PHONE_CHECKS]  # regional checks left for this text

    def one(m: re.Match[str]) -> str:
        raw, start, end = m.group(0).rstrip(" -.("), m.start(), m.end()
        tail = m.group(0)[len(raw):]
        plus = raw[:1] == "+" or raw[:3].upper() == "%2B" or raw[:2] == "00"
        before = text[max(0, start - 40):start]
        linked = _LINKED.search(before) is not None
        glued = start > 0 and (text[start - 1].isalpha() or text[start - 1] in ".:#-") and _GLUED_WORD.search(before) is not None
        if (start and not (linked or glued) and (text[start - 1].isalnum() or (text[start - 1] in "_+-./%" and not plus))) or (
                end < len(text) and (text[end].isalnum() or text[end] in "_-/%"
                                     or (text[end] in ".," and text[end + 1:end + 2].isdigit()))):
            return m.group(0)  # a part of a longer token: an id, a decimal, a path
        if not 7 <= sum(c.isdigit() for c in raw) <= 15 or _DATE.fullmatch(raw):
            return m.group(0)
        if linked and not plus:
            raw = "+" + raw
        international = raw.startswith(("+", "00")) or raw[:3].upper() == "%2B"
        if not international and _PRODUCT_NUMBER.search(text, max(0, start - 24), start):
            return m.group(0)  # "item 8806094934", "part 800-555-0199", "EAN: 4006381333931": a product's number
        if international:
            ok = _valid_phone("+" + raw.removeprefix("+").removeprefix("%2B").removeprefix("%2b").removeprefix("00"),
                              ("ZZ",))
        elif glued or (_PHONE_WORDS.search(text, max(0, start - 40), start) if near is None
              else (i := bisect_left(near, start - 40)) < len(near) and near[i] < start):
            checks[0] -= 1  # each tries 29 regions (about 1 ms): past the budget a number after a phone word is one
            ok = checks[0] < 0 or _valid_phone(raw, _PHONE_REGIONS)
        else:
            ok = _NANP.fullmatch(raw) is not None  # shaped like one: 555 numbers and unassigned area codes too
        return PHONE + tail if ok else m.group(0)

    return _PHONE_RE.sub(one, text)


HINTS = {
    **emails.HINTS,
    "id_word": _ID_HINTS,
    "phone_word": _PHONE_HINTS,
}


def redact_personal(text: str, hits: Hits | None, digits: int) -> str:
    """`text` with e-mail addresses, IBANs, national ids, card numbers and phone numbers replaced; `hits` from
    `Hints.find` (None: look everywhere), `digits` how many digits `text` holds."""

    found = text

    def starts(group: str) -> list[int] | None:
        # `hits` holds offsets into the text as it came: once a replacement moved them, look everywhere
        return None if hits is None or text != found else hits.get(group, [])

    text = emails.redact_emails(text, hits)
    if digits >= 8:
        text = _ibans(text)
    if digits >= 6:
        text = _ids(text)
        if hits is None or "id_word" in hits:
            text = substitute_at(text, _ID_WORDS, _named_id, starts("id_word"))
    if digits >= 13:
        text = _DIGIT_RUN.sub(_cards, _GROUPED.sub(_grouped_card, text))
    if digits >= 7:
        text = _phones(text, starts("phone_word"))
    return text
