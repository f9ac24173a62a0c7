"""Redaction catalogue (issue 16, item 4): many generated variants per class of secret or personal datum, each
redacted by `redact_text` and from every field of a run (metadata included), then the whole catalogue through the
real API on SQLite and PostgreSQL: never in a response, a stored column, the embedder's input or the log."""

from __future__ import annotations

import json
import logging
import random
import re
import string
from collections.abc import Iterator
from urllib.parse import quote

import phonenumbers
import pytest
from sqlalchemy import select
from stdnum import iban, luhn, verhoeff
from stdnum.cn import ric
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.it import codicefiscale
from stdnum.kr import rrn
from stdnum.pl import pesel

from condenser import Trajectory, redact_text, redact_trajectory
from condenser.redact import normalize
from ems_service.repositories import unpack_trajectory
from ems_service.tables import EpisodeRecord, EventRecord, LessonRecord, SessionRecord

RNG = random.Random(16)
Variant = tuple[str, str]  # (the secret, a text that carries it)


def _token(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def _password() -> str:
    """A password as people pick them: words, digits, symbols; some contain the word "password" itself."""
    word = RNG.choice(["Hunter", "Sunflower", "Tr0ub4dor", "Password", "passw0rd", "Kennwort", "Motdepasse", "Zebra"])
    return f"{word}{RNG.randint(10, 9999)}{RNG.choice('!#$%&*?@^~-_')}{_token(3)}"


# -- passwords and secret-named fields ---------------------------------------------------------------------------

FIELD_NAMES = [
    "password", "Password", "PASSWORD", "passwd", "pwd", "pass", "pw", "user_password", "userPassword", "db-pass",
    "DB_PASSWORD", "password_confirmation", "new-password", "Passwort", "Kennwort", "wachtwoord", "mot_de_passe",
    "mot de passe", "contraseña", "senha", "lösenord", "hasło", "пароль", "密码", "パスワード", "비밀번호",
    "client_secret", "clientSecret", "aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "secret_key", "secret",
    "api_key", "apiKey", "X-Api-Key", "access_token", "refresh_token", "auth_token", "private_key", "AccountKey",
    "SharedAccessKey", "session_id", "sessionid", "cookie", "pin", "cvv",
]
ASSIGNMENTS = ["{k}={v}", "{k} = {v}", "{k}: {v}", "{k}:{v}", '"{k}": "{v}"', "'{k}': '{v}'", "{k}=\"{v}\"",
               "{k} := {v}", "{k} => {v}", "https://app.example.com/login?user=jane&{k}={v}&next=/home",
               "export {k}={v}", "<input name={k} value={v}>", "{{\"user\": \"jane\", \"{k}\": \"{v}\"}}"]
SAYINGS = ["my {k} is {v}", "My {k} is {v}.", "the {k} for the admin account is {v}", "{k} was {v}",
           "Log in with {k} {v}", "use {k} {v} to sign in", "The new {k} will be {v}", "{k} set to {v}"]
LANGUAGE_SAYINGS = ["Das Passwort lautet {v}", "mon mot de passe est {v}", "la contraseña es {v}",
                    "a senha é {v}", "la password è {v}", "het wachtwoord is {v}", "lösenordet är {v}",
                    "пароль: {v}", "密码：{v}", "パスワード: {v}", "비밀번호: {v}", "hasło: {v}", "şifre: {v}"]


def secret_fields() -> Iterator[Variant]:
    for name in FIELD_NAMES:
        for form in ASSIGNMENTS:
            value = _password()
            in_url = form.startswith("https://")  # a value in a URL's query is percent-encoded
            yield (quote(value, safe="") if in_url else value), form.format(k=name, v=quote(value, safe="") if in_url else value)
    for name in ["password", "Password", "PIN", "passcode", "passphrase", "secret", "api key", "access token"]:
        for form in SAYINGS:
            value = _password() if name != "PIN" else str(RNG.randint(10**7, 10**8))
            yield value, form.format(k=name, v=value)
    for form in LANGUAGE_SAYINGS:
        value = _password()
        yield value, form.format(v=value)


TYPING_FORMS = [
    'input_text(index={i}, text="{v}")', 'input_text(index={i}, text="{v}", clear_existing=true)',
    "fill('#password', '{v}')", 'fill("input[name=passwd]", "{v}")', "page.fill('#pwd', '{v}')",
    'page.get_by_label("Password").fill("{v}")', "page.locator('#user-password').type('{v}')",
    "send_keys('{v}')", 'type("{v}")', "type[{i}][{v}]", "fill_form[{i}][{v}]", "fill_search[{i},{v}]",
    'Type "{v}"', "TYPE: {v} [textbox] Password", "TYPE: {v} [input]", "type_text(selector='#pass', text='{v}')",
]
THOUGHTS = ["Enter the password", "Now I type the password into the password field", "Passwort eingeben",
            "Saisir le mot de passe", "Introducir la contraseña", "Digitar a senha", "Inserisci la password",
            "Введите пароль", "输入密码", "パスワードを入力します", "Type the PIN", "Enter the passcode"]


def typed_passwords() -> Iterator[tuple[str, dict]]:
    """A run that types a password in one of many action formats, the field or the thought saying so; the
    value comes back in later observations, thoughts and errors (the agent echoes it)."""
    for form in TYPING_FORMS:
        for thought in RNG.sample(THOUGHTS, 4):
            value = _password()
            action = form.format(i=RNG.randint(1, 99), v=value)
            yield value, {
                "task": "Sign in to the shop",
                "steps": [
                    {"action": "click(index=3)", "thought": "Open the login form"},
                    {"action": action, "thought": thought},
                    {"action": "click(index=9)", "observation": f"typed {value} into the field",
                     "thought": f"I entered {value}", "error": f"login failed for {value}"},
                ],
            }
    # the action given as an object, as the browser-use importer and the SDK write it
    for thought in THOUGHTS:
        value = _password()
        yield value, {"task": "Sign in", "steps": [
            {"action": {"name": "input_text", "args": {"index": 5, "text": value}}, "thought": thought},
            {"action": "click(index=6)", "observation": f"value={value}"}]}


# -- credentials in URLs and connection strings, provider keys, tokens, private keys ---------------------------

SCHEMES = ["postgres", "postgresql", "postgresql+psycopg", "mysql", "mysql+pymysql", "mariadb", "mongodb",
           "mongodb+srv", "redis", "rediss", "amqp", "amqps", "ftp", "sftp", "ssh", "smtp", "imap", "http", "https",
           "ldap", "jdbc:postgresql", "mssql+pyodbc", "oracle", "clickhouse", "nats", "kafka", "s3"]
HOSTS = ["localhost", "db", "10.0.0.7", "127.0.0.1", "192.168.1.20:5432", "[::1]", "[2001:db8::1]:6379",
         "db.internal", "cluster0.abcde.mongodb.net", "example.com:8080", "postgres-primary"]


def connection_strings() -> Iterator[Variant]:
    for scheme in SCHEMES:
        for host in RNG.sample(HOSTS, 4):
            pw = _password().replace("@", "").replace("/", "").replace("?", "").replace("#", "")
            user = RNG.choice(["root", "postgres", "admin", "app_user", "u"])
            yield pw, f"{scheme}://{user}:{pw}@{host}/app?sslmode=require"
    for template in ["Server=db;Database=app;User Id=sa;Password={pw};", "host=localhost user=postgres password={pw}"
                     " dbname=app", "Data Source=10.0.0.7;Initial Catalog=x;User ID=sa;Pwd={pw}",
                     "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={pw};EndpointSuffix=core.windows.net",
                     "DATABASE_URL=postgres://app:{pw}@localhost/app", "redis://:{pw}@localhost:6379/0"]:
        for _ in range(3):
            pw = _token(24) + RNG.choice("!%^*-_")
            yield pw, template.format(pw=pw)


def _keys() -> Iterator[str]:
    a, hx = string.ascii_letters + string.digits, "0123456789abcdef"
    yield "sk-" + _token(48)
    yield "sk-proj-" + _token(64, a + "_-") + _token(8)
    yield "sk-svcacct-" + _token(60, a + "_-") + "A"
    yield "sk-ant-api03-" + _token(80, a + "_-") + "AA"
    yield "sk_live_" + _token(99)
    yield "sk_test_" + _token(24)
    yield "rk_live_" + _token(24)
    yield "whsec_" + _token(32)
    for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"):
        yield p + _token(36)
    yield "github_pat_" + _token(22) + "_" + _token(59)
    yield "glpat-" + _token(20, a + "_-")
    yield "xoxb-" + "-".join(str(RNG.randint(10**10, 10**11)) for _ in range(2)) + "-" + _token(24)
    yield "xoxp-" + "-".join(str(RNG.randint(10**10, 10**11)) for _ in range(3)) + "-" + _token(32, hx)
    yield "https://hooks.slack.com/services/T" + _token(10) + "/B" + _token(10) + "/" + _token(24)
    for p in ("AKIA", "ASIA"):
        yield p + _token(16, string.ascii_uppercase + string.digits)
    yield "AIza" + _token(35, a + "_-")
    yield "ya29." + _token(120, a + "_-")
    yield "GOCSPX-" + _token(28, a + "_-")
    yield "hf_" + _token(34)
    yield "npm_" + _token(36)
    yield "pypi-AgEIcHlwaS5vcmc" + _token(80, a + "_-")
    yield "SG." + _token(22, a + "_-") + "." + _token(43, a + "_-")
    yield "shpat_" + _token(32, hx)
    yield "dop_v1_" + _token(64, hx)
    yield "dapi" + _token(32, hx)
    yield "dp.pt." + _token(43)
    yield "lin_api_" + _token(40)
    yield "PMAK-" + _token(24, hx) + "-" + _token(34, hx)
    yield "sq0atp-" + _token(22, a + "_-")
    yield "gsk_" + _token(52)
    yield "xai-" + _token(80)
    yield "r8_" + _token(37)
    yield "pplx-" + _token(48)
    yield "nvapi-" + _token(64, a + "_-")
    yield "glsa_" + _token(32) + "_" + _token(8, hx)
    yield "ATATT3xFfGF0" + _token(180, a + "_-=")
    yield "sntrys_" + _token(64, a + "+/")
    yield "AGE-SECRET-KEY-1" + _token(58, string.ascii_uppercase + string.digits)
    yield str(RNG.randint(10**8, 10**9)) + ":AA" + _token(33, a + "_-")  # Telegram bot
    yield "eyJ" + _token(30, a + "_-") + ".eyJ" + _token(60, a + "_-") + "." + _token(43, a + "_-")  # JWT
    yield "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSIsImFkbWluIjp0cnVlfQ."  # unsigned JWT


def provider_keys() -> Iterator[Variant]:
    contexts = ["{k}", "key {k}", "Authorization: Bearer {k}", "export TOKEN={k}", "curl -H 'X-Api-Key: {k}'",
                "https://api.example.com/v1?key={k}&q=1", "using `{k}` as the key", "({k})"]
    for key in _keys():
        for context in RNG.sample(contexts, 3):
            yield key, context.format(k=key)
    for scheme in ("Bearer", "bearer", "Basic", "Token", "Digest"):
        for _ in range(3):
            cred = _token(RNG.randint(16, 40)) + RNG.choice(["", "=", "=="])
            yield cred, f"Authorization: {scheme} {cred}"


PEM_KINDS = ["RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY",
             "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK"]


def private_keys() -> Iterator[Variant]:
    for kind in PEM_KINDS:
        body_lines = [_token(64, string.ascii_letters + string.digits + "+/") for _ in range(6)]
        body = "\n".join(body_lines)
        yield body_lines[2], f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"
        yield body_lines[3], json.dumps({"type": "service_account", "private_key": f"-----BEGIN {kind}-----\n{body}\n"
                                         f"-----END {kind}-----\n"})  # JSON-escaped newlines
        yield body_lines[4], f"key file:\n-----BEGIN {kind}-----\n{body}"  # cut off before the end line
        yield body_lines[1], f"-----BEGIN {kind}-----\r\n" + "\r\n".join(body_lines) + f"\r\n-----END {kind}-----"
        indented = "\n".join("    " + line for line in body_lines)
        yield body_lines[5], f"tls:\n  key: |\n    -----BEGIN {kind}-----\n{indented}\n    -----END {kind}-----"
        yield body_lines[0], f'export SSH_KEY="-----BEGIN {kind}-----\\n' + "\\n".join(body_lines) + f'\\n-----END {kind}-----"'
    body = "\n".join(_token(64) for _ in range(4))
    yield body[70:130], f"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n{body}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----"
    yield body[10:60], f"PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nPrivate-Lines: 4\n{body}\nPrivate-MAC: abc123"


# -- personal data -----------------------------------------------------------------------------------------------

IBAN_BBANS = {"DE": "{8}{10}", "GB": "NWBK{6}{8}", "NL": "ABNA{10}", "AT": "{16}", "CH": "{5}{12}", "PL": "{24}",
              "SE": "{20}", "DK": "{14}", "IE": "AIBK{6}{8}", "LU": "{3}{13}", "LT": "{16}", "LV": "BANK{13}",
              "HU": "{24}", "RO": "AAAA{16}", "CZ": "{20}", "GR": "{23}", "CY": "{8}{16}", "MT": "MALT{5}{18}"}


def _iban(country: str) -> str:
    def digits(n: str) -> str:
        return "".join(RNG.choice(string.digits) for _ in range(int(n)))
    bban = IBAN_BBANS[country]
    parts = bban.replace("}", "{").split("{")
    bban = "".join(digits(p) if p.isdigit() else p for p in parts)
    return country + iban.calc_check_digits(country + "00" + bban) + bban


KNOWN_IBANS = ["ES9121000418450200051332", "FR1420041010050500013M02606", "IT60X0542811101000000123456",
               "BE71096123456769", "PT50000201231234567890154", "NO9386011117947", "FI2112345600000785",
               "GB82WEST12345698765432", "SA0380000000608010167519", "AE070331234567890123456", "BR1800360305000010009795493C1"]


def ibans() -> Iterator[Variant]:
    numbers = [_iban(c) for c in IBAN_BBANS for _ in range(2)] + KNOWN_IBANS
    for number in numbers:
        assert iban.is_valid(number), number
        grouped = " ".join(number[i:i + 4] for i in range(0, len(number), 4))
        for form in (number, grouped, grouped.lower(), f"IBAN: {grouped}", f"IBAN {number} BIC COBADEFFXXX",
                     f"pay to {grouped.replace(' ', chr(0xA0))}"):
            yield number, form


def phones() -> Iterator[Variant]:
    regions = ["US", "CA", "GB", "DE", "FR", "IN", "ES", "IT", "NL", "BR", "AU", "JP", "CN", "MX", "SE", "PL", "CH",
               "KR", "ZA", "IE", "BE", "AT", "PT", "NO", "DK", "FI", "SG", "NZ", "RU"]
    fmt = phonenumbers.PhoneNumberFormat
    for region in regions:
        for kind in (phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE):
            number = phonenumbers.example_number_for_type(region, kind)
            if number is None:
                continue
            national = str(number.national_number)
            for text in (phonenumbers.format_number(number, fmt.E164),
                         phonenumbers.format_number(number, fmt.INTERNATIONAL),
                         "call " + phonenumbers.format_number(number, fmt.INTERNATIONAL).replace(" ", "-"),
                         phonenumbers.format_number(number, fmt.RFC3966),
                         "00" + phonenumbers.format_number(number, fmt.E164)[1:],
                         "phone: " + phonenumbers.format_number(number, fmt.NATIONAL),
                         "Tel. " + phonenumbers.format_number(number, fmt.NATIONAL),
                         "Telefon " + phonenumbers.format_number(number, fmt.NATIONAL)):
                yield national, text
    for number in ("(415) 555-2671", "415-555-2671", "415.555.2671", "+1 415 555 2671", "1-415-555-2671",
                   "(212) 736-5000", "312 555 0199", "+1 (646) 555-0187"):
        yield "".join(c for c in number if c.isdigit())[-10:], f"reach me at {number} today"


def _ssn() -> str:
    area = RNG.choice([n for n in range(1, 900) if n != 666])
    return f"{area:03d}-{RNG.randint(1, 99):02d}-{RNG.randint(1, 9999):04d}"


def _nino() -> str:
    first = RNG.choice("ABCEGHJKLMNOPRSTWXYZ")
    second = RNG.choice("ABCEGHJKLMNPRSTWXYZ")
    if first + second in {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}:
        first, second = "A", "B"
    return f"{first}{second}{RNG.randint(0, 999999):06d}{RNG.choice('ABCD')}"


def _cpf() -> str:
    base = [RNG.randint(0, 9) for _ in range(9)]
    for n in (10, 11):
        total = sum(d * w for d, w in zip(base, range(n, 1, -1), strict=False))
        base.append((total * 10 % 11) % 10)
    s = "".join(map(str, base))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


def _aadhaar() -> str:
    base = str(RNG.randint(2, 9)) + "".join(RNG.choice(string.digits) for _ in range(10))
    s = base + verhoeff.calc_check_digit(base)
    return f"{s[:4]} {s[4:8]} {s[8:]}"


def _pesel() -> str:
    base = f"{RNG.randint(50, 99):02d}{RNG.randint(1, 12):02d}{RNG.randint(1, 28):02d}{RNG.randint(0, 9999):04d}"
    return base + pesel.calc_check_digit(base)


def _nir() -> str:
    base = f"{RNG.choice('12')}{RNG.randint(40, 99):02d}{RNG.randint(1, 12):02d}{RNG.randint(1, 95):02d}" \
           f"{RNG.randint(1, 990):03d}{RNG.randint(1, 999):03d}"
    return base + nir.calc_check_digits(base)


def _personnummer() -> str:
    base = f"{RNG.randint(50, 99):02d}{RNG.randint(1, 12):02d}{RNG.randint(1, 28):02d}{RNG.randint(0, 999):03d}"
    return f"{base[:6]}-{base[6:]}{luhn.calc_check_digit(base)}"


def _rrn() -> str:
    base = f"{RNG.randint(50, 99):02d}{RNG.randint(1, 12):02d}{RNG.randint(1, 28):02d}{RNG.choice('12')}" \
           f"{RNG.randint(0, 99999):05d}"
    return f"{base[:6]}-{base[6:]}{rrn.calc_check_digit(base)}"


def _ric() -> str:
    base = f"110105{RNG.randint(1950, 2005)}{RNG.randint(1, 12):02d}{RNG.randint(1, 28):02d}{RNG.randint(0, 999):03d}"
    return base + ric.calc_check_digit(base + "0")  # stdnum wants a placeholder check digit here


def _ahv() -> str:
    from stdnum import ean
    base = "756" + "".join(RNG.choice(string.digits) for _ in range(9))
    s = base + ean.calc_check_digit(base)
    return f"{s[:3]}.{s[3:7]}.{s[7:11]}.{s[11:]}"


def _sin() -> str:
    base = str(RNG.randint(1, 7)) + "".join(RNG.choice(string.digits) for _ in range(7))
    s = base + luhn.calc_check_digit(base)
    return f"{s[:3]} {s[3:6]} {s[6:]}"


def national_ids() -> Iterator[Variant]:
    generated = {
        "ssn": _ssn, "nino": _nino, "cpf": _cpf, "aadhaar": _aadhaar, "nir": _nir, "personnummer": _personnummer,
        "rrn": _rrn, "ric": _ric, "ahv": _ahv,
        "dni": lambda: (lambda b: b + dni.calc_check_digit(b))(f"{RNG.randint(10**7, 10**8 - 1)}"),
        "nie": lambda: (lambda b: b + nie.calc_check_digit(b))(f"{RNG.choice('XYZ')}{RNG.randint(0, 10**7 - 1):07d}"),
        "cf": lambda: (lambda b: b + codicefiscale.calc_check_digit(b))(
            "".join(RNG.choice(string.ascii_uppercase) for _ in range(6)) + f"{RNG.randint(40, 99)}"
            + RNG.choice("ABCDEHLMPRST") + f"{RNG.randint(1, 28):02d}" + RNG.choice("ABCDEFGHLM") + f"{RNG.randint(100, 999)}"),
    }
    for kind, make in generated.items():
        for i in range(6):
            value = make()
            text = [value, f"{kind.upper()} {value}", f"my id is {value}.", f"({value})"][i % 4]
            yield value, text
    # numbers without a distinctive form: redacted after the word that names them
    named = {"SSN": lambda: _ssn().replace("-", ""), "PESEL": _pesel, "SIN": _sin, "BSN": lambda: "111222333",
             "Steuer-ID": lambda: "36574261809", "TC Kimlik No": lambda: "17291716060", "Aadhaar": lambda: _aadhaar().replace(" ", ""),
             "passport number": lambda: "X" + str(RNG.randint(10**7, 10**8)), "national id": lambda: str(RNG.randint(10**8, 10**9)),
             "身份证号码": _ric, "주민등록번호": _rrn}
    for word, make in named.items():
        for form in ("{w}: {v}", "{w} {v}", "my {w} is {v}", "{w}={v}"):
            value = make()
            yield value, form.format(w=word, v=value)


CARD_PREFIXES = {"visa": ("4", 16), "visa13": ("4", 13), "visa19": ("4", 19), "mastercard": ("51", 16),
                 "mastercard2": ("2221", 16), "amex": ("37", 15), "discover": ("6011", 16), "jcb": ("35", 16),
                 "diners": ("36", 14), "unionpay": ("62", 19), "maestro": ("6759", 16)}
FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def _pan(prefix: str, length: int) -> str:
    base = prefix + "".join(RNG.choice(string.digits) for _ in range(length - len(prefix) - 1))
    return base + luhn.calc_check_digit(base)


def card_numbers() -> Iterator[Variant]:
    separators = ["", " ", "-", ".", "\u00a0", "\u202f", "\u2009", "  "]
    prefixes = ["", "card ", "card:", "CC#", "Visa-", "card no.", "PAN=", "x", "cc_number=", "(", "Karte "]
    for brand, (prefix, length) in CARD_PREFIXES.items():
        for _ in range(8):
            pan = _pan(prefix, length)
            sep = RNG.choice(separators)
            groups = [pan[i:i + 4] for i in range(0, len(pan), 4)] if brand != "amex" else [pan[:4], pan[4:10], pan[10:]]
            written = sep.join(groups)
            if RNG.random() < 0.3:
                written = written.translate(FULL_WIDTH)
            if RNG.random() < 0.2:
                written = "\u200b".join(written)  # zero-width spaces between the digits
            yield pan, f"{RNG.choice(prefixes)}{written} exp 12/29"
    for sep in separators:  # every separator on one number, full width too
        pan = _pan("4", 16)
        written = sep.join(pan[i:i + 4] for i in range(0, 16, 4))
        yield pan, f"pay with {written}"
        yield pan, f"pay with {written.translate(FULL_WIDTH)}"


def emails() -> Iterator[Variant]:
    for local, domain in [("jane.doe", "example.com"), ("j.smith+shop", "mail.example.co.uk"), ("user_42", "corp.io"),
                          ("max.mustermann", "beispiel.de"), ("o'brien", "example.ie")]:
        host, tld = domain.rsplit(".", 1)
        for form in ("{l}@{d}", "{l}(at){d}", "{l} (at) {d}", "{l}[at]{d}", "{l} [at] {h} [dot] {t}", "{l}{{at}}{d}",
                     "{l}<at>{d}", "{l} at {h} dot {t}", "{l} AT {h} DOT {t}", "{l}(at){h}(dot){t}", "{l}-at-{h}-dot-{t}",
                     "{l} @ {d}", "{l}＠{d}", "{l}%40{d}", "mailto:{l}&#64;{d}", "{l}\u200b@{d}", "{l}@{h}.{t}."):
            yield local, "contact " + form.format(l=local, d=domain, h=host, t=tld) + " today"
    for address in ("josé@exämple.de", "用户@例子.广告", "почта@пример.рф", "δοκιμή@παράδειγμα.δοκιμή", "umlaut.user@xn--bcher-kva.de",
                    "müller@straße.de", "ユーザー@例え.jp", "अजय@डाटा.भारत"):
        yield address.split("@")[0], f"mail {address} please"


CLASSES = {
    "secret_fields": list(secret_fields()),
    "connection_strings": list(connection_strings()),
    "provider_keys": list(provider_keys()),
    "private_keys": list(private_keys()),
    "ibans": list(ibans()),
    "phones": list(phones()),
    "national_ids": list(national_ids()),
    "card_numbers": list(card_numbers()),
    "emails": list(emails()),
}
TYPED = list(typed_passwords())
SIZES = {name: len(variants) for name, variants in CLASSES.items()} | {"typed_passwords": len(TYPED)}


_SEPARATORS = re.compile(r"[\s\-.()/]+")


def _compact(text: str) -> str:
    return _SEPARATORS.sub("", normalize(text))


def _leaks(secret: str, text: str | tuple[str, str, str]) -> bool:
    """True when `secret` is still readable in `text`: verbatim, after normalization (full-width digits, hidden
    characters), or with its separators dropped (4111 1111 ... = 4111-1111-...). `text` may come `_prepared`."""
    raw, flat, compact_text = text if isinstance(text, tuple) else _prepared(text)
    if secret in raw or secret in flat:
        return True
    compact = _compact(secret)
    return len(compact) >= 8 and compact in compact_text


def _prepared(text: str) -> tuple[str, str, str]:
    return text, normalize(text), _compact(text)


def test_catalogue_is_large():
    """Many variants per class (the README quotes these sizes)."""
    print(json.dumps(SIZES))
    assert all(size >= 40 for size in SIZES.values()), SIZES


PASSWORD_CLASSES = {"secret_fields", "connection_strings"}


def _piece_left(secret: str, text: str, out: str) -> bool:
    """True when a piece of `secret` (a run of 3+ letters or digits) survives in `out` more often than the rest
    of `text` holds it: a value cut short at a symbol ("[SECRET]&abc") leaks its tail."""
    rest = normalize(text).replace(normalize(secret), " ")
    return any(out.count(piece) > rest.count(piece) for piece in re.findall(r"[^\W_]{3,}", normalize(secret)))


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_every_variant_is_redacted_in_text(name):
    leaked = [(secret, text, redact_text(text)) for secret, text in CLASSES[name]
              if _leaks(secret, redact_text(text))
              or (name in PASSWORD_CLASSES and _piece_left(secret, text, normalize(redact_text(text))))]
    assert not leaked, f"{len(leaked)} of {len(CLASSES[name])} leaked, e.g. {leaked[:3]}"


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_redaction_is_idempotent(name):
    for _, text in CLASSES[name]:
        once = redact_text(text)
        assert redact_text(once) == once


def _run_with_everywhere(secret_text: str) -> dict:
    """A run carrying `secret_text` in every text field, metadata included."""
    return {
        "task": f"Buy a kettle; note {secret_text}",
        "start_url": f"https://shop.example.com/?q={secret_text}",
        "task_id": secret_text, "agent": secret_text, "model": secret_text, "domain": "shop.example.com",
        "outcome": {"success": False, "label_source": "benchmark", "status": secret_text},
        "tags": {secret_text: secret_text, "note": secret_text},
        "steps": [{"url": f"https://shop.example.com/{secret_text}", "observation": secret_text,
                   "thought": secret_text, "action": f"click('{secret_text}')", "error": secret_text}],
    }


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_every_field_of_a_run_is_redacted(name):
    for secret, text in CLASSES[name]:
        clean = redact_trajectory(Trajectory.model_validate(_run_with_everywhere(text)))
        assert not _leaks(secret, clean.model_dump_json()), (secret, text)


def test_typed_passwords_are_redacted_everywhere():
    leaked = []
    for secret, run in TYPED:
        clean = redact_trajectory(Trajectory.model_validate(run)).model_dump_json()
        if _leaks(secret, clean) or _piece_left(secret, json.dumps(run, ensure_ascii=False), normalize(clean)):
            leaked.append((secret, run["steps"][1]))
    assert not leaked, f"{len(leaked)} of {len(TYPED)} leaked, e.g. {leaked[:3]}"


# -- the real API, both databases ----------------------------------------------------------------------------------

class _Spy:
    """Wraps the real embedder and keeps every text it was asked to embed."""

    def __init__(self, inner) -> None:
        self.inner, self.texts = inner, []

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def embed(self, texts: list[str]):
        self.texts += list(texts)
        return self.inner.embed(texts)


def _api_runs() -> Iterator[tuple[list[str], dict]]:
    """Runs that carry the whole catalogue: each variant in a different field, metadata included (a variant goes
    to a metadata field it fits: EMS_LIMITS__MAX_LABEL_CHARS for the status, MAX_NAME_CHARS for names and tag keys)."""
    variants = [v for name in sorted(CLASSES) for v in CLASSES[name]]
    for i in range(0, len(variants), 24):
        chunk = variants[i:i + 24]
        texts = [t for _, t in chunk]

        def take(limit: int, texts: list[str] = texts) -> str:
            text = next((t for t in texts if len(t) <= limit), "x")
            if text in texts:
                texts.remove(text)
            return text

        run = {"task": f"Chunk {i}: " + take(1900), "task_id": take(255), "agent": take(255), "model": take(255),
               "domain": "shop.example.com", "start_url": take(2000),
               "outcome": {"success": False, "label_source": "benchmark", "status": take(64)},
               "tags": {take(255): take(900), "k": take(900)}}
        texts += [t for _, t in chunk[:4]]  # enough for one step at least
        run["steps"] = [{"url": "https://shop.example.com/" + texts[j][:1900], "observation": texts[j + 1],
                         "thought": texts[j + 2], "action": f"type('#q', '{texts[j + 3]}')"}
                        for j in range(0, len(texts) - 3, 4)]
        yield [s for s, _ in chunk], run
    for i in range(0, len(TYPED), 8):
        chunk = TYPED[i:i + 8]
        steps = [step for _, run in chunk for step in run["steps"]]
        yield [s for s, _ in chunk], {"task": f"Typed passwords {i}", "steps": steps,
                                      "outcome": {"success": False, "label_source": "benchmark"},
                                      "tags": {"first_run_steps": str(len(chunk[0][1]["steps"]))}}


def test_catalogue_never_stored_embedded_returned_or_logged(settings, embedder, caplog):
    from fastapi.testclient import TestClient

    from ems_service import create_app

    runs = list(_api_runs())
    secrets = [s for chunk, _ in runs for s in chunk]
    spy = _Spy(embedder)
    caplog.set_level(logging.DEBUG)
    responses = []
    with TestClient(create_app(settings, embedder=spy)) as client:
        singles, batch = runs[: len(runs) // 2], runs[len(runs) // 2:]
        for _, run in singles:
            responses.append(client.post("/v1/episodes", json=run))
        responses.append(client.post("/v1/episodes:batch", json={"episodes": [run for _, run in batch]}))
        for _, run in runs[::5]:  # live sessions: start with the first steps, append the rest, finish
            # (a password typed in one append and echoed in a later one is not caught: see the README)
            first = int(run.get("tags", {}).get("first_run_steps", 1))
            start = {k: v for k, v in run.items() if k not in ("steps", "outcome")} | {"steps": run["steps"][:first]}
            session = client.post("/v1/sessions", json=start)
            responses.append(session)
            sid = session.json()["id"]
            if run["steps"][first:]:
                responses.append(client.post(f"/v1/sessions/{sid}/steps", json={"steps": run["steps"][first:]}))
            responses.append(client.get(f"/v1/sessions/{sid}"))
            responses.append(client.post(f"/v1/sessions/{sid}/finish", json={"outcome": run["outcome"]}))
        for _, run in runs[::6]:
            text = run["steps"][0].get("observation") or run["task"]
            responses.append(client.post("/v1/search", json={"text": text, "k": 5}))
            responses.append(client.post("/v1/search", json={"trajectory": run, "k": 5}))
            responses.append(client.post("/v1/coach", json={"trajectory": run}))
        # a query's domain is free text too (and lower-cased by the model): it is embedded with the query
        domain_secrets = [(secret, text) for name in ("emails", "phones", "secret_fields", "connection_strings")
                          for secret, text in CLASSES[name][:4] if len(text) <= 255]
        for _, text in domain_secrets:
            query = {"task": "Buy a kettle", "domain": text, "steps": [{"action": "click(index=1)"}]}
            responses.append(client.post("/v1/search", json={"trajectory": query, "k": 3}))
        secrets += [secret.lower() for secret, _ in domain_secrets]
        ids = [r.json()["id"] for r in responses if r.request.url.path == "/v1/episodes" and r.status_code < 300]
        responses += [client.get(f"/v1/episodes/{i}", params={"include_trajectory": True}) for i in ids[:10]]
        responses += [client.get("/v1/episodes", params={"limit": 200}), client.get("/v1/lessons"),
                      client.get("/v1/events"), client.get("/v1/stats")]
        for r in responses:
            assert r.status_code < 400, (r.request.url.path, r.text[:500])
        blobs = [("the response of " + r.request.url.path, r.text) for r in responses]
        rt = client.app.state.runtime
        with rt.db.session() as s:
            for rec in s.scalars(select(EpisodeRecord)):
                blobs.append(("an episode row", " ".join(str(getattr(rec, c.name)) for c in EpisodeRecord.__table__.columns
                                                         if c.name not in ("embedding", "trajectory"))))
                blobs.append(("a stored raw trajectory", unpack_trajectory(rec.trajectory).model_dump_json()))
            for model in (SessionRecord, LessonRecord, EventRecord):
                for rec in s.scalars(select(model)):
                    blobs.append((model.__name__, " ".join(str(getattr(rec, c.name)) for c in model.__table__.columns)))
    blobs.append(("the embedder's input", "\n".join(spy.texts)))
    blobs.append(("the log", "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)))
    assert spy.texts, "the embedder was used"
    everything = _prepared("\n".join(blob for _, blob in blobs))
    leaked = [secret for secret in secrets if _leaks(secret, everything)]
    leaks = [(secret, where, blob[max(0, blob.find(secret[:6]) - 200):blob.find(secret[:6]) + 200])
             for secret in leaked for where, blob in blobs if _leaks(secret, blob)]
    assert not leaks, f"{len(leaks)} leaks, e.g. {leaks[:5]}"
