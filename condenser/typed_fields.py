"""What a typed value is, by the field it was typed into: a password or another secret (the field's selector, the
page's words for the element, or the step's thought say so), a one-time or card code (3-8 digits into a field named
for one), a phone number, a street address or an identity number (into a field named for it). `typed_secret(step)`
gives the value's forms to scrub from the rest of the run and the action with it masked.
"""

from __future__ import annotations

import html
import json
import re
from urllib.parse import quote as url_quote
from urllib.parse import quote_plus

from condenser.lookalikes import normalize
from condenser.models import Step
from condenser.placeholders import ADDRESS, NATIONAL_ID, PHONE, SECRET
from condenser.scan import literal_finder, nocase
from condenser.typed_values import typed_value

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
_PASSWORD_FIELD = re.compile(r"(?i)#pw\b|\bpw\b|[=\[\s'\"#]pass\b|passwd|\bpwd\b|type=[\"']?password"
                             r"|\b(?:wifi|wi fi|wlan|network|wpa2?|wep|api|secret|private|access)\s?key\b")
# A field named for something else: what is typed there is not a password, whatever the thought says.
_OTHER_FIELD = re.compile(nocase(r"\b(?:search|query|e-?mail|user ?name|login id|first name|last name|full name"
                                 r"|address|city|zip|postal|phone|destination|keyword|location|comment|message)\b"))

# a typing action that names no element of its own ("keyboard.type('x')", {"action": "type", "text": "x"}): it types
# into whatever the step before focused
_NAMES_ELEMENT = re.compile(r"[#\[=.]\w|\b(?:index|id|name|selector|ref|element|xpath|css)\b|By\.", re.I)


def typed_secret(step: Step, focused: str | None = None) -> tuple[dict[str, str], str, bool] | None:
    """(the typed value in the forms it may appear in, the action with it masked, whether the field itself says it
    is a password) for a password-like field. `focused`: the action of the step before, which chose the element an
    action naming none types into ("click('#password')", then "keyboard.type('x')")."""
    action = normalize(step.action)
    found = typed_value(action)
    if found is None:
        return None
    start, end, target = found
    value = action[start:end]
    if not value.strip() or value.startswith(SECRET):
        return None
    name = _split_name(target)  # "#loginPass", "#userPwd", "#wifi-key" read as words
    if focused and not _NAMES_ELEMENT.search(target.replace("keyboard.type", "")):
        focused_name = _split_name(normalize(focused))
        if ((_PASSWORD_WORDS.search(focused_name) or _PASSWORD_FIELD.search(focused_name))
                and not _OTHER_FIELD.search(focused_name)):
            return (*_masked(action, start, end, value), True)
    if not (_PASSWORD_WORDS.search(target) or _PASSWORD_FIELD.search(target) or _PASSWORD_FIELD.search(name)
            or _SECRET_FIELD_NAME.search(name)):
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
        if _SEARCH_BOX.search(element):
            return None  # the page calls [7] a search box: what is typed there is a query, whatever the thought says
        if says_password(_FORGOT.sub(" ", element)):  # the page says what [7] is ("Forgot password?" is a link's)
            return (*_masked(action, start, end, value), True)
        if _CODE_FIELD.search(_PUBLIC_CODE.sub(" ", f"{_split_name(target)} {element}")) and _SHORT_CODE.fullmatch(value.strip()):
            return (*_masked(action, start, end, value), True)  # a one-time code or a card's code: 3-8 digits
        if len(value.split()) >= 3 and not _PASSPHRASE.search(step.thought or ""):
            return None
        # the thought can be long: it is scanned last, for the values that pass the checks above
        observation = step.observation if step.observation and len(step.observation) <= 200 else ""
        if not says_password(_FORGOT.sub(" ", normalize(f"{step.thought or ''} {observation}").replace(value, " "))):
            return None
        return (*_masked(action, start, end, value), False)
    return (*_masked(action, start, end, value), True)


_PASSPHRASE = re.compile(r"(?i)passphrase|pass phrase|mnemonic|seed phrase|recovery phrase")
_SEARCH_BOX = re.compile(r"(?i)\bsearch(?:box)?\b|\bquery\b|type=[\"']?search|role=[\"']?search|\bcombobox\b")
# a link or a hint about a password, not the field ("Forgot password?", "Reset your password")
_FORGOT = re.compile(r"(?i)forgot(?:ten)?\s+(?:your\s+|my\s+|the\s+)?password|reset\s+(?:your\s+|my\s+)?password"
                     r"|password\s+reset|change\s+(?:your\s+|my\s+)?password")
# A field's name in a selector, in any case style ("#verificationCode", "card_cvv", "cc-csc"), read as words
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|[_\-]+")
# names that say a secret once split into words: one-time and card codes whatever the value
_SECRET_FIELD_NAME = re.compile(r"(?i)\b(?:verification code|one time code|totp|mfa code|2fa code|otp|cvv2?|cvc2?|csc"
                                r"|cc csc|security code|card code|card cvv|card cvc|passcode|sms code|auth code"
                                # a red team of 2026-12-07: tokens, a security question's answer, a memorable word,
                                # an account's number
                                r"|token|api token|access token|auth token|security answer|secret answer|maiden name"
                                r"|memorable (?:word|information|phrase|answer)|account number|acct number|routing number"
                                r"|sort code)\b")
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
    percent-encoded, HTML-escaped, JSON-unescaped and escaped, spelled out one character at a time), and the action
    with it masked."""
    bare = _KEYS_AFTER.sub("", value)
    forms = {value, bare, url_quote(bare, safe=""), quote_plus(bare), html.escape(bare),
             "".join(c if c.isalnum() else f"&#{ord(c)};" for c in bare),
             "".join(c if c.isalnum() else f"\\u{ord(c):04x}" for c in bare)}  # a script's "\u0023"
    if len(bare) >= 6:  # a page that spells it out: "X q 7 # m P", "X-q-7-#-m-P"
        forms |= {" ".join(bare), "-".join(bare)}
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
