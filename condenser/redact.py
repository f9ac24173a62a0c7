"""Redaction of secrets and personal data in every text field of a run, metadata included.

Text is NFKC-normalized and stripped of invisible format characters (zero-width, bidi controls, soft hyphens)
before detection, so full-width digits, non-breaking spaces and hidden joiners change nothing. A text in which
nothing is found is returned as it came (not normalized). What is looked for: values typed into password-like
fields (and that value wherever else it occurs in the run), private keys, credentials in URLs and connection
strings, provider keys and tokens, values of secret-named fields (`password=`, `"pwd": "…"`, "my password is …"),
e-mail addresses, IBANs, national ids, card numbers and phone numbers (`condenser.credentials`, `condenser.personal` and the modules they call).
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from typing import Any, TypeVar
from urllib.parse import quote as url_quote
from urllib.parse import quote_plus

from condenser import credentials, personal
from condenser.lookalikes import PUNCTUATION, ascii_digits, fold_mixed_words
from condenser.models import Outcome, Step, Trajectory
from condenser.placeholders import ADDRESS, CARD, EMAIL, IBAN, NATIONAL_ID, PHONE, SECRET
from condenser.scan import Hints, literal_finder, nocase

RunT = TypeVar("RunT", bound=Trajectory)  # a Trajectory or a subclass (a live run): the copy keeps its class

__all__ = ["ADDRESS", "CARD", "EMAIL", "IBAN", "NATIONAL_ID", "PHONE", "SECRET", "normalize", "redact_task_and_actions",
           "redact_text", "redact_texts", "redact_trajectory"]

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


_DIGIT_RUNS = re.compile(r"\d+")


def _digits(text: str) -> int:
    """How many digits `text` holds (str.count is faster than a regex on ASCII)."""
    if text.isascii():
        return len(text) - len(text.encode().translate(None, b"0123456789"))
    return sum(map(len, _DIGIT_RUNS.findall(text)))


_HINTS = Hints({**credentials.HINTS, **personal.HINTS})
_WORD = re.compile(r"\w")


# literal values to replace: by [SECRET], or (a mapping) each by its own placeholder
Secrets = set[str] | frozenset[str] | dict[str, str]


def _scrub_secrets(texts: list[str], extra_secrets: Secrets) -> list[str]:
    """Every occurrence of a value in `extra_secrets` as a whole word (a password "submit" leaves "submitted"
    alone) replaced (by [SECRET], or by the placeholder a mapping gives the value), overlapping ones together.

    One automaton pass a text: a run of many steps that each type a password, with texts that quote them all,
    took a substitution per value per text (cubic: 200 steps, 6.6 s).
    """
    secrets = sorted(s for s in extra_secrets if s)
    if not secrets:
        return texts
    placeholders = extra_secrets if isinstance(extra_secrets, dict) else {}
    occurrences = literal_finder(secrets)
    out = []
    for text in texts:
        spans: list[tuple[int, int, str]] = []
        for i, start, end in occurrences(text):
            secret = secrets[i]
            if (secret[0].isalnum() or secret[0] == "_") and start and _WORD.match(text, start - 1):
                continue
            if (secret[-1].isalnum() or secret[-1] == "_") and _WORD.match(text, end):
                continue
            spans.append((start, end, placeholders.get(secret, SECRET)))
        if not spans:
            out.append(text)
            continue
        spans.sort()
        parts, last, cover, mark = [], 0, -1, SECRET
        for start, end, placeholder in spans:
            if start >= cover:  # a new group (occurrences that only touch stay two)
                if cover >= 0:
                    parts.append(mark)
                parts.append(text[last:start])
                mark = placeholder
            elif placeholder == SECRET:
                mark = SECRET  # a group that holds a secret says so
            cover = max(cover, end)
            last = cover
        parts.append(mark)
        out.append("".join(parts) + text[cover:])
    return out


def redact_text(text: str, extra_secrets: Secrets = frozenset()) -> str:
    """`text` with every secret and personal datum replaced (by [SECRET], [EMAIL], [CARD], [IBAN], [ID], [PHONE];
    a street address typed into an address field by [ADDRESS]);
    `extra_secrets` are literal values to replace too (normalized, as `normalize` leaves them)."""
    return redact_texts([text], extra_secrets)[0]


def redact_texts(texts: list[str], extra_secrets: Secrets = frozenset()) -> list[str]:
    """`redact_text` of each of `texts`, with the hint words of all of them found in one pass (one release of the
    GIL for the lot: see `Hints.find_many`)."""
    norms = [normalize(text) for text in texts]
    scrubbed = _scrub_secrets(norms, extra_secrets) if extra_secrets else norms
    out = []
    for text, norm, body, hits in zip(texts, norms, scrubbed, _HINTS.find_many(scrubbed), strict=True):
        redacted = credentials.redact_credentials(body, hits, _HINTS.find)
        if redacted != body:  # the hints' offsets are of the text before the credentials were replaced
            body, hits = redacted, _HINTS.find(redacted)
        body = personal.redact_personal(body, hits, _digits(body))
        out.append(text if body == norm else body)
    return out


# -- values typed into password-like fields ---------------------------------------------------------------------

_PASSWORD_WORDS = re.compile(nocase(
    r"pass(?:word|wd|code|phrase|wort)|\bpwd\b|\bpin\b|\bcvv2?\b|\bcvc\b|security code|kennwort|wachtwoord"
    r"|mot de passe|contrase(?:ñ|n)a|\bsenha\b|parola d|lösenord|passord|adgangskode|has(?:ł|l)o|\bheslo\b|salasana"
    r"|şifre|sifre|jelszó|пароль|密码|密碼|パスワード|비밀번호|secret|\botp\b|one-time code|verification code|api key"
    r"|credentials?|passkey|kata sandi|mật khẩu|mat khau|كلمة المرور|كلمة السر|पासवर्ड|\bparola\b|\bgeslo\b|암호"
    r"|κωδικ|รหัสผ่าน|passphrase|pass phrase|mnemonic|seed phrase"))
# every word above starts with one of these (lower case): a text holding none is passed over in one C pass, before
# the pattern (a long alternation the engine tries at each position) is run
_PASSWORD_HINTS = literal_finder([
    "pass", "pwd", "pin", "cvv", "cvc", "security code", "kennwort", "wachtwoord", "mot de passe", "contrase", "senha",
    "parola", "lösenord", "passord", "adgangskode", "hasło", "haslo", "heslo", "salasana", "şifre", "sifre", "jelszó",
    "пароль", "密码", "密碼", "パスワード", "비밀번호", "secret", "otp", "one-time code", "verification code", "api key",
    "credential", "kata sandi", "mật khẩu", "mat khau", "كلمة", "पासवर्ड", "geslo", "암호", "κωδικ", "รหัสผ่าน",
    "mnemonic", "seed phrase"])


def says_password(text: str) -> bool:
    """Whether `text` names a password or another secret a field may ask for (_PASSWORD_WORDS)."""
    return bool(text) and bool(_PASSWORD_HINTS(text.lower())) and _PASSWORD_WORDS.search(text) is not None


# what a selector calls a password field ('#pw', 'input[name=pass]'), read in the action's target only
_PASSWORD_FIELD = re.compile(r"(?i)#pw\b|\bpw\b|[=\[\s'\"#]pass\b|passwd|\bpwd\b|type=[\"']?password")
# A field named for something else: what is typed there is not a password, whatever the thought says.
_OTHER_FIELD = re.compile(nocase(r"\b(?:search|query|e-?mail|user ?name|login id|first name|last name|full name"
                                 r"|address|city|zip|postal|phone|destination|keyword|location|comment|message)\b"))
_TYPING_VERBS = (r"type|fill|input|input_text|send_keys|type_text|enter_text|set_value|fill_form|fill_field"
                 r"|fill_search|press_sequentially|insert_text|write|type_into|browser_type|sendkeys|inserttext"
                 r"|presssequentially|setvalue|fill_in|typetext|typewrite|type_keys|typekeys|send_text|sendtext")
_CALL = re.compile(r"(?:^|[\s.;])(?:" + nocase(_TYPING_VERBS) + r")\s*\((?P<args>.*)\)\s*;?\s*$", re.S)  # as _call()
# any other call (computer(action="type", text="x"), act(...)): typed only through a named value argument
_ANY_CALL = re.compile(r"(?:^|[\s.;])[A-Za-z_][\w]*\s*\((?P<args>.*)\)\s*;?\s*$", re.S)
# A name starts at a word start: tried inside a word, `\w+` ran to the word's end from every position (quadratic on a
# long word: 20k characters took seconds).
_LITERAL = re.compile(r"(?:(?<!\w)(?P<name>\w+)\s*[=:]\s*)?(?P<lit>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'"
                      r"|`(?:[^`\\$]|\\.)*`)", re.S)  # a JavaScript template literal without ${} too
_VALUE_ARGS = {"text", "value", "keys", "content", "input", "string", "data", "password", "secret", "query"}
_FORMS = [
    re.compile(r"(?i)^\s*type\s*\"(?P<val>.*)\"\s*$", re.S),  # Type "x"
    # TYPE: x [textbox] Password. The value holds no "[" and ends in a non-space (as the shortest value always did):
    # `.*?` tried the target at every place of a run of spaces or brackets, and each try ran to the run's end.
    re.compile(r"(?i)^\s*type:\s*(?P<val>(?:[^\[]*?\S)??)(?P<tgt>\s*\[[^\]]*\].*)$", re.S),
    # type [7] [x] [1] (WebArena: the last bracket says whether Enter follows): the value is the middle bracket
    re.compile(r"(?i)^\s*(?:" + _TYPING_VERBS + r")\s*\[(?P<tgt>[^\]]*)\]\s*\[(?P<val>[^\]]*)\]\s*\[[01]\]\s*$"),
    re.compile(r"(?i)^\s*(?:" + _TYPING_VERBS + r")\s*\[(?P<tgt>[^\]]*)\]\s*\[(?P<val>.*)\]\s*$", re.S),  # type[7][x]
    re.compile(r"(?i)^\s*(?:" + _TYPING_VERBS + r")\s*\[(?P<tgt>[^\],]*),\s*(?P<val>.*)\]\s*$", re.S),  # fill[7,x]
    # type [7] x: an element, then the value unbracketed
    re.compile(r"(?i)^\s*(?:" + _TYPING_VERBS + r")\s*\[(?P<tgt>[^\]]*)\]\s+(?P<val>[^\s\[](?:.*\S)?)\s*$", re.S),
    # xdotool type 'x' (el.value = "x" and a JSON action are read by _assigned and _json_typed)
    re.compile(r"(?i)^\s*xdotool\s+type\s+(?:--?\w+(?:[ =][^\s\"'-]\S*)?\s+)*+(?P<q>[\"'])(?P<val>[^\"']*)(?P=q)\s*$", re.S),
    re.compile(r"(?i)^\s*xdotool\s+type\s+(?:--?\w+(?:[ =][^\s\"'-]\S*)?\s+)*+(?P<val>[^\s\"'-]\S*)\s*$"),  # unquoted
    # Mind2Web's action_reprs: "[textbox]  Password -> TYPE: x"
    re.compile(r"(?i)^\s*(?P<tgt>\[[^\]]*\][^\n]*?)\s*->\s*type:\s*(?P<val>\S(?:.*\S)?)\s*$", re.S),
    # natural language: "Type x into the password field", "Enter x in the PIN box"
    re.compile(r"(?i)^\s*(?:type|enter|input|fill in|put|write)\s+[\"'`]?(?P<val>[^\s\"'`](?:[^\n\"'`]{0,126}[^\s\"'`])??)[\"'`]?"
               r"\s+(?:into|in|as)\s+(?P<tgt>(?:the\s+|a\s+|my\s+|your\s+)?[\w' -]{1,40}?(?:field|box|input|textbox|prompt))"
               r"\s*\.?\s*$"),
    # type x. A value of spaces types nothing; its end is a non-space (trailing spaces run to the end once).
    re.compile(r"(?i)^\s*type(?=\s*+\S)\s+(?P<val>(?![\[(]).*?\S)\s*$", re.S),
]


def _call(action: str) -> tuple[re.Match[str], bool] | None:
    """(`_CALL.search(action)`, True), else (`_ANY_CALL`'s match, False), in linear time: without the closing ")"
    no call matches, and every typing verb would have been tried to the end of the text."""
    if "(" not in action or not action.rstrip().rstrip(";").rstrip().endswith(")"):  # a statement's ";" too
        return None
    m = _CALL.search(action)
    if m:
        return m, True
    m = _ANY_CALL.search(action)
    return (m, False) if m else None


def _literals(text: str, start: int, end: int) -> list[re.Match[str]]:
    """`_LITERAL.finditer(text, start, end)` in linear time.

    A quote that nothing closes was tried as a literal's start, and each try ran to the end: quadratic on
    `type(\\"\\"\\"...)`. After the first such quote every later one of its kind is escaped in its reading, so
    none of them can start a literal or close one that starts before it: they are masked (a character that is no
    quote, no backslash and no word character, which the pattern otherwise reads as it read the quote), so the
    offsets stay.
    """
    if end - start < 256:
        return list(_LITERAL.finditer(text, start, end))
    masked = list(text)
    for quote in "\"'`":
        closes = [False] * (end + 2)  # closes[i]: a literal of this quote opened just before i would close
        for i in range(end - 1, start - 1, -1):
            c = text[i]
            closes[i] = True if c == quote else (i + 1 < end and closes[i + 2]) if c == "\\" else closes[i + 1]
        first = next((i for i in range(start, end) if text[i] == quote and not closes[i + 1]), end)
        for i in range(first + 1, end):
            if text[i] == quote:
                masked[i] = "\x00"
    return list(_LITERAL.finditer("".join(masked), start, end))


def _typed_value(action: str) -> tuple[int, int, str] | None:
    """(start, end, target) of the value an action types, or None when it types nothing."""
    found = _call(action)
    if found:
        m, typing = found
        literals = _literals(action, m.start("args"), m.end("args"))
        named = [lit for lit in literals if (lit.group("name") or "").lower() in _VALUE_ARGS]
        unnamed = [lit for lit in literals if not lit.group("name")] if typing else []
        chosen = named[-1] if named else (unnamed[-1] if unnamed else None)
        if chosen is None:
            return None
        start, end = chosen.start("lit") + 1, chosen.end("lit") - 1
        return start, end, action[:start] + action[end:]
    found_value = _assigned(action) or _json_typed(action)
    if found_value:
        return found_value
    for form in _FORMS:
        shaped = form.match(action)
        if shaped:
            target = shaped.group("tgt") if "tgt" in form.groupindex else ""
            return shaped.start("val"), shaped.end("val"), target
    return None


_ASSIGN = re.compile(r"\.value\s*=\s*([\"'])")
_JSON_VALUE_KEYS = ("text", "value", "keys", "input", "content")


def _assigned(action: str) -> tuple[int, int, str] | None:
    """`el.value = "x"`: (start, end, target) of the value, in linear time (the closing quote is the last one)."""
    m = _ASSIGN.search(action)
    if m is None:
        return None
    end = action.rfind(m.group(1))
    if end <= m.end() or action[end + 1:].strip(" \t\n;"):
        return None
    return m.end(), end, action[: m.start()]


def _json_typed(action: str) -> tuple[int, int, str] | None:
    """{"action": "type", "selector": "#pw", "text": "x"}: the typed value of an action posted as a JSON object."""
    text = action.strip()
    if text[:1] + text[-1:] not in ("{}", "[]") or len(text) > 100_000:
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):  # a nesting deeper than the parser's stack is no action
        return None
    value = _json_value(obj, 0)
    if value is None:
        return None
    literal = json.dumps(value, ensure_ascii=False)[1:-1]
    start = action.find(literal)
    if start < 0:
        return None
    return start, start + len(literal), action[:start] + action[start + len(literal):]


def _json_value(obj: Any, depth: int) -> str | None:
    """The typed value of a JSON action: a value key of the object, else of the object or list inside it
    ({"input_text": {"index": 7, "text": "x"}}, [{"type": {...}}], {"args": {...}}), depth first, a few levels."""
    if depth > 4:
        return None
    if isinstance(obj, dict):
        value = next((str(obj[k]) for k in _JSON_VALUE_KEYS if isinstance(obj.get(k), str) and obj[k]), None)
        if value is not None:
            return value
        inner: list[Any] = [v for v in obj.values() if isinstance(v, dict | list)]
    elif isinstance(obj, list):
        inner = [v for v in obj[:16] if isinstance(v, dict | list)]
    else:
        return None
    return next((v for v in (_json_value(item, depth + 1) for item in inner) if v is not None), None)


def _typed_password(step: Step) -> tuple[dict[str, str], str, bool] | None:
    """(the typed value in the forms it may appear in, the action with it masked, whether the field itself says it
    is a password) for a password-like field."""
    action = normalize(step.action)
    found = _typed_value(action)
    if found is None:
        return None
    start, end, target = found
    value = action[start:end]
    if not value.strip() or value.startswith(SECRET):
        return None
    if not (_PASSWORD_WORDS.search(target) or _PASSWORD_FIELD.search(target)
            or _SECRET_FIELD_NAME.search(_split_name(target))):
        element = _element_text(step.observation, target)
        field_words = f"{_split_name(target)} {element}"
        if _SEARCHING.search(field_words):
            pass  # a search box that mentions an address or a phone: what is typed there is a query
        elif (_ID_FIELD.search(field_words) and len(value) <= 40 and sum(c.isdigit() for c in value) >= 5
                and not _DATE.fullmatch(value.strip())):
            return (*_masked(action, start, end, value, NATIONAL_ID), True)  # "123-45-6789" into "Social Security Number"
        elif (_PHONE_FIELD.search(field_words) and _TYPED_PHONE.fullmatch(value.strip())
                and not _DATE.fullmatch(value.strip())):
            return (*_masked(action, start, end, value, PHONE), True)  # a phone number typed into a phone field
        elif (len(value) <= 120 and _ADDRESS_FIELD.search(_NOT_STREET.sub(" ", field_words))
                and _STREET_VALUE.search(value)):
            return (*_masked(action, start, end, value, ADDRESS), True)  # "742 Evergreen Terrace" into "Street address"
        if _OTHER_FIELD.search(target):
            return None
        if says_password(element):  # the page says what [7] is
            return (*_masked(action, start, end, value), True)
        if _CODE_FIELD.search(_PUBLIC_CODE.sub(" ", f"{_split_name(target)} {element}")) and _SHORT_CODE.fullmatch(value.strip()):
            return (*_masked(action, start, end, value), True)  # a one-time code or a card's code: 3-8 digits
        if len(value.split()) >= 3 and not _PASSPHRASE.search(step.thought or ""):
            return None
        # the thought can be long: it is scanned last, for the values that pass the checks above
        observation = step.observation if step.observation and len(step.observation) <= 200 else ""
        if not says_password(normalize(f"{step.thought or ''} {observation}").replace(value, " ")):
            return None
        return (*_masked(action, start, end, value), False)
    return (*_masked(action, start, end, value), True)


_PASSPHRASE = re.compile(r"(?i)passphrase|pass phrase|mnemonic|seed phrase|recovery phrase")
# A field's name in a selector, in any case style ("#verificationCode", "card_cvv", "cc-csc"), read as words
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|[_\-]+")
# names that say a secret once split into words: one-time and card codes whatever the value
_SECRET_FIELD_NAME = re.compile(r"(?i)\b(?:verification code|one time code|totp|mfa code|2fa code|otp|cvv2?|cvc2?|csc"
                                r"|cc csc|security code|card code|card cvv|card cvc|passcode|sms code|auth code)\b")
# names or page words of a field that takes a short code: secret when what is typed is 3-8 digits
_CODE_FIELD = re.compile(r"(?i)\bcode\b|verification|one time|one-time|\botp\b|\b2fa\b|\bmfa\b|\btotp\b|authenticat"
                         r"|\bcvv|\bcvc|\bcsc\b|\bpin\b|security code|código de (?:verificación|seguridad)|验证码|認証|인증")
_SHORT_CODE = re.compile(r"[A-Z]{0,2}-?\d{3,8}")
# codes that are no secret: a place's, an offer's, a booking's, a product's
_PUBLIC_CODE = re.compile(r"(?i)\b(?:zip|postal|post|postcode|promo|promotion|coupon|discount|voucher|gift|area|country|dial"
                          r"|referral|invite|invitation|product|item|sku|color|colour|language|currency|iata|airport|region"
                          r"|state|tax|vat|booking|confirmation|reservation|tracking|order|event|course|class|source|qr|bar"
                          r"|style|model|part|ean|upc|isbn|hs|naics|sic|swift|bic|sort|routing|branch|city|department|pin"
                          r"|reference|store|flight|year|course|discount|member)\s?code\b|\bcode\s+postal|\bcodice\s+postale")


_SEARCHING = re.compile(r"(?i)\b(?:search|find|neighbou?rhood|city|zip|destination|where|location|near|directions)\b")
_PHONE_FIELD = re.compile(r"(?i)\b(?:phone|telephone|mobile|cell|cellphone|whatsapp|sms|telefon|téléphone|teléfono"
                          r"|telefone|telefono|handy|mobil|telefoon|телефон|tel|portable|celular|móvil|movil)"
                          r"(?:nummer|number|num|no|nr)?\b"
                          r"|\b(?:rufnummer|numéro de (?:téléphone|portable)|número de (?:teléfono|celular|móvil|telefone)"
                          r"|numer (?:telefonu|komórki)|nomor (?:hp|telepon|ponsel|handphone)|số điện thoại|so dien thoai"
                          r"|номер телефона)"
                          r"|電話|电话|手机|手機|携帯|휴대폰|전화")
# a field for a street address, and a value with a house number (or a street word) in it
_ADDRESS_FIELD = re.compile(r"(?i)\b(?:street|address|addr|address ?line|line ?1|house|apartment|apt|suite"
                            r"|straße|strasse|adresse|dirección|direccion|endereço|endereco|indirizzo|anschrift|hausnummer"
                            r"|domicilio|logradouro|morada|adres|adresa|адрес|ulica|alamat|địa chỉ|dia chi"
                            r"|(?:liefer|rechnungs|versand|post|wohn)adresse)(?: ?line)? ?\d?\b|住所|地址|주소")
# a field for an identity number: what is typed there with 5+ digits is one ("Social Security Number", "#nik")
_ID_FIELD = re.compile(r"(?i)\b(?:ssn|social security|social insurance|national (?:id|identity|insurance)|nik|ktp|инн"
                       r"|снилс|cnic|bvn|nin|c[ée]dula|cpf|dni|nie|aadhaar|pesel|passport|tax (?:id|number)|tin|itin"
                       r"|sin|nino|nric|curp|rut|personnummer|bsn|codice fiscale|steuer ?id|id (?:number|no)"
                       r"|identity (?:number|card)|identification number|driver'?s? licen[cs]e|iqama|emirates id)\b")
_DATE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}")
_NOT_STREET = re.compile(r"(?i)\b(?:e-?mail|ip|web|url|mac|wallet|ship(?:ping)? to a|search|bitcoin|btc|eth)\s*address\b")
_STREET_VALUE = re.compile(r"(?i)\b\d{1,6}[a-z]?\b.*\b[^\W\d_]{3,}|\b[^\W\d_]{3,}.*\b\d{1,6}[a-z]?\b|\b(?:street|st|avenue|ave|road|rd"
                           r"|lane|ln|drive|dr|boulevard|blvd|way|court|ct|terrace|place|pl|straße|strasse|rue|calle|via)\b"
                           r"|\d+\s*[号號番]|[路街巷弄].*\d|[都道府県市区町村].*\d|丁目|번지|[로길]\s*\d")  # Chinese, Japanese, Korean addresses
_TYPED_PHONE = re.compile(r"\+?[\d\s().-]{7,20}")


def _split_name(target: str) -> str:
    """A selector's names as words: "#verificationCode" -> "# verification Code"."""
    return _CAMEL.sub(" ", target)
_KEYS_AFTER = re.compile(r"(?:\\[ntr]|[\n\t\r]|\{(?:enter|tab|return)\})+$", re.I)  # "x{enter}", "x\n"


def _masked(action: str, start: int, end: int, value: str, placeholder: str = SECRET) -> tuple[dict[str, str], str]:
    """The forms a typed secret takes in the other fields (as typed, without the keys pressed after it,
    percent-encoded, HTML-escaped, JSON-unescaped), and the action with it masked."""
    bare = _KEYS_AFTER.sub("", value)
    forms = {value, bare, url_quote(bare, safe=""), quote_plus(bare), html.escape(bare),
             "".join(c if c.isalnum() else f"&#{ord(c)};" for c in bare)}
    try:  # a JSON-escaped literal ("pa\"ss") appears unescaped in the other fields
        forms.add(json.loads(f'"{value}"'))
        forms.add(_KEYS_AFTER.sub("", json.loads(f'"{value}"')))
    except ValueError:
        pass
    return dict.fromkeys(forms, placeholder), action[:start] + placeholder + action[end:]


# an element named by its id: the whole target ("7" of type [7] x) or a call's index (input_text(index=7, ...))
_ELEMENT_ID = re.compile(r"^\s*\[?\s*(\d{1,6})\s*\]?\s*$|\b(?:index|ref|element|id|bid)[\"']?\s*[=:]\s*[\"']?(\d{1,6})\b"
                         r"|^\s*\w+\s*\(\s*[\"']([a-z]{1,2}\d{1,6})[\"']")  # fill('a121', ...): a BrowserGym bid
_NEXT_ELEMENT = re.compile(r"\[[a-z]{0,2}\d{1,6}\]")
ELEMENT_CHARS = 160  # what the page says of an element: the text after its id, to the next element's


def _element_text(observation: str | None, target: str) -> str:
    """What the page (a step's observation, of any length) says about the element a target names by id ("7" of
    "type [7] x": "[7] <input type=password>", "[7] textbox 'PIN'"); empty when the target is no id."""
    m = _ELEMENT_ID.search(target)
    if not observation or m is None:
        return ""
    mark = f"[{m.group(1) or m.group(2) or m.group(3)}]"
    out: list[str] = []
    at = observation.find(mark)
    while at >= 0 and len(out) < 8:  # an id may recur (a label and its field): a few mentions, each bounded
        head = observation[at + len(mark):at + len(mark) + ELEMENT_CHARS]
        stop = _NEXT_ELEMENT.search(head)
        out.append(head[: stop.start()] if stop else head)
        before = observation[max(0, at - ELEMENT_CHARS):at]  # the element before: a label names its field
        marks = list(_NEXT_ELEMENT.finditer(before))
        out.append(before[marks[-1].end():] if marks else "")
        at = observation.find(mark, at + len(mark))
    return " ".join(out)


def _typed_secrets(trajectory: Trajectory) -> tuple[dict[str, str], dict[int, str]]:
    """Values typed into password-like fields (3+ characters) with their placeholders, and the actions with them
    masked (by step)."""
    secrets: dict[str, str] = {}
    masked_actions: dict[int, str] = {}
    for i, step in enumerate(trajectory.steps):
        found = _typed_password(step)
        if found:  # a short plain word ("submit") is masked in its action only, not throughout the run, unless the
            # field itself is a password field ("monkey" typed into type=password is a password)
            forms, masked, field = found
            secrets |= {v: mark for v, mark in forms.items()
                        if len(v) >= 3 and (field or not (len(v) < 8 and v.isalpha() and v.islower()))}
            masked_actions[i] = masked
    return secrets, masked_actions


def redact_task_and_actions(trajectory: Trajectory) -> tuple[str, list[str]]:
    """The task and actions of a run with every secret replaced, as `redact_trajectory` would leave them:
    what a query embeds, without redacting (or copying) observations and thoughts."""
    secrets, masked_actions = _typed_secrets(trajectory)
    task, *actions = redact_texts([trajectory.task, *(masked_actions.get(i, s.action)
                                                      for i, s in enumerate(trajectory.steps))], secrets)
    return task, actions


def redact_trajectory(trajectory: RunT) -> RunT:
    """A copy of `trajectory` with every secret replaced, in every text field: task, urls, steps, outcome
    status, task_id, agent, model, domain, tag keys and values (all redacted in one `redact_texts` call)."""
    secrets, masked_actions = _typed_secrets(trajectory)
    texts: list[str] = []

    def put(value: str | None) -> int | None:
        return None if value is None else put_text(value)

    def put_text(value: str) -> int:
        texts.append(value)
        return len(texts) - 1

    step_fields = ("url", "observation", "thought", "action", "error")
    at_steps = [{name: put(masked_actions.get(i, step.action) if name == "action" else getattr(step, name))
                 for name in step_fields} for i, step in enumerate(trajectory.steps)]
    run_fields = ("task", "start_url", "task_id", "agent", "model", "domain")
    at_run = {name: put(getattr(trajectory, name)) for name in run_fields}
    at_status = put(trajectory.outcome.status)
    at_tags = [(put_text(k), put_text(v)) for k, v in trajectory.tags.items()]
    done = redact_texts(texts, secrets)

    def get(at: int | None) -> str | None:
        return None if at is None else done[at]

    steps = []
    for step, at in zip(trajectory.steps, at_steps, strict=True):
        update = {name: get(i) for name, i in at.items()}
        # most steps hold no secret: keep the (immutable) step itself rather than copying it
        unchanged = all(value == getattr(step, name) for name, value in update.items())
        steps.append(step if unchanged else step.model_copy(update=update))
    outcome: Outcome = trajectory.outcome
    if outcome.status is not None and (status := get(at_status)) != outcome.status:
        outcome = outcome.model_copy(update={"status": status})
    return trajectory.model_copy(
        update={
            **{name: get(i) for name, i in at_run.items()},
            "steps": steps,
            "outcome": outcome,
            "tags": {done[k]: done[v] for k, v in at_tags},
        }
    )
