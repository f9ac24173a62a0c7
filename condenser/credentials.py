"""Credentials: private keys, credentials in URLs and connection strings, bearer tokens and the
values of secret-named fields in many languages ("password=", "\"pwd\": \"...\"", "my password is ...").

Each detector runs only where one of its hint words occurs (`HINTS`, found by `condenser.scan.Hints`). Secrets known
by their shape alone (vendor keys, password hashes, recovery phrases) are `condenser.key_shapes`'.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import unquote

from condenser import command_line, key_shapes, one_time_codes, url_tokens
from condenser.placeholders import NOT_VALUES, PLACEHOLDER, SECRET
from condenser.scan import WORD_STARTS, Hits, nocase, substitute_at

_PEM = re.compile(
    r"-{4,5}\s?BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?\s?-{4,5}.*?(?:-{4,5}\s?END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?"
    r"\s?-{4,5}|$)|PuTTY-User-Key-File-\d.*?(?:Private-MAC: ?[0-9a-f]+|$)", re.S)
_PEM_HEAD = re.compile(r"-{4,5}\s?BEGIN|PuTTY-User-Key-File-")  # where a block of _PEM may start
# ://user:password@host, any scheme (postgres, mongodb+srv, jdbc:mysql, ftp, redis) and any host: one without a
# dot (localhost, db), an IP, [::1]. Starting at "://", a literal, the engine finds candidates fast.
_URL_CREDENTIALS = re.compile(r"(://[^\s:/?#@\[\]]*:)([^\s/@]+)(@)")  # "#" and "?" unescaped in passwords too
_SCHEME = re.compile(r"(?i)\b(bearer|basic|digest|token|apikey)(\s+)([^\s\"'<>,;]{8,})")

# Names of fields whose value is a secret, in the languages agents meet, matched as a word or as a part of an
# identifier (user_password, clientSecret, DB-PASS, X-Api-Key) but never inside a word (bypass, secretary).
# Strong names take any suffix (password_confirmation, secretKey); weak ones (pass, pin, key, cookie) none.
_STRONG_WORDS = (
    "password|pass[ _-]word|p[@4]ss(?:word|wd)|p[a@4]ssw0rd|(?:pin|verification|security|2fa|mfa|otp|one[ _-]time)[ _-]?code"
    "|passwort|passwd|passphrase|passcode|pwd|kennwort|wachtwoord(?:en)?|mot[ _-]?de[ _-]?passe|contrase(?:ñ|n)a"
    "|senha|parola[ _-]?d[' ]?ordine|lösenord(?:et)?|losenord(?:et)?|adgangskoden?|passord(?:et)?|has(?:ł|l)[oa]|heslo|salasana(?:si)?"
    "|(?:ş|s)ifre(?:niz|n|m|miz|yi)?|kata[ _-]?sandi|m(?:ậ|a)t[ _-]?kh(?:ẩ|a)u|كلمة[ _]السر|رمز[ _]عبور|암호|κωδικός|κωδικος"
    "|รหัสผ่าน|geslo|seed[ _-]?phrase|mnemonic|privkey|priv[ _-]key|security[ _-]?answer|pass[ _-]?phrase"
    "|(?:sms|auth|authentication|login|confirmation)[ _-]?code|口令|验证码|驗證碼|認証コード|인증번호|код[ _]подтверждения"
    "|doğrulama[ _]kodu|dogrulama[ _]kodu|kode[ _]otp"
    "|jelszó|parool|парол[ьяема]|密码|密碼|パスワード|비밀번호|कूटशब्द|पासवर्ड|סיסמה|كلمة[ _]المرور|secret|token|api[ _.-]?key"
    "|parol[ăa]|lozink[ae]|contrasenya|kata[ _]laluan|گذرواژه|پسورد|পাসওয়ার্ড|токен|api[ _-]?ключ|ключ[ _]api"
    "|cl[ée][ _]api|api[ _-]?schl[üu]ssel|密钥|令牌|アクセストークン|トークン|토큰|暗証番号|access[ _-]?token"
    "|apikey|access[ _.-]?key|private[ _.-]?key|credentials?|authorization|accountkey|sharedaccesskey"
    "|connection[ _.-]?string|conn[ _.-]?str|dsn|client[ _.-]?secret"
)
_WEAK_WORDS = "pass|pw|mdp|clave|pin|cvv2?|cvc2?|cid|otp|tan|parola|cookie|session[ _.-]?id|sessionid|session|sid|auth|key|signature|sig"
# Where a secret's name may start. Words that occur inside common words are looked for at a word start only
# (" pin" not "shopping", " sid" not "inside"); multi-word names by their first two parts ("access_k", not the
# "access" of "accessibility").
_FIELD_HINTS = (
    "pass", "p@ss", "p4ss", "pw", "kennw", "verification", "2fa", "mfa", "one-time", "one time", "one_time",
    " pin c", "_pin c", "security c", "otp c", "wachtw", "mot de", "mot_de", "motdepasse", "contrase", "senha", "parola", "lösenord",
    "losenord", "adgangskode", "hasło", "haslo", "heslo", "salasana", "şifre", "sifre", "jelsz", "parool", "парол",
    "密码", "密碼", "パスワード", "비밀번호", "कूटशब्द", "पासवर्ड", "סיסמה", "كلمة", "secret", "token", "credential",
    "authorization", "accountkey", "sharedaccesskey", "cookie", "signature", "cvv", "cvc", "otp", "dsn",
    "şifre", "ifre", "kata sandi", "kata_sandi", "mật", "mat kh", "كلمة", "رمز", "암호", "κωδικ", "รหัสผ่าน", "geslo", "seed",
    "mnemonic", "privkey", "priv_key", "security_answer", "security answer", "passphrase", "pass_phrase",
    "parol", "lozink", "contrasenya", "kata laluan", "kata_laluan", "گذرواژه", "پسورد", "পাসওয়ার্ড", "токен", "ключ",
    "clé api", "cle api", "api-schl", "api schl", "api_schl", "apischl", "api-ключ", "api ключ", "密钥", "令牌", "トークン",
    "토큰", "暗証番号",
    "sms code", "sms_code", "auth code", "auth_code", "login code", "confirmation code", "验证码", "驗證碼", "認証コード",
    "인증번호", "口令", "код подтверждения", "doğrulama", "dogrulama", "kode otp", " tan", "\ntan", "tan:", "tan ", "parola",
    " cid", "cid:", "session=", "session:",
    *(f"{word}{sep}{nxt}" for word, nxt in (("api", "k"), ("access", "k"), ("private", "k"), ("client", "s"),
                                             ("connection", "s"), ("conn", "s"), ("access", "t")) for sep in ("", "_", "-", ".", " ")),
    *(f"{start}{word}" for start in WORD_STARTS for word in ("key", "pin", "sid", "sig", "auth", "mdp", "clave",
                                                              "session")),
)
HINTS = {
    "pem": ("PRIVATE KEY", "PuTTY-User-Key"),
    "scheme": ("bearer", "basic", "digest", "token", "apikey"),
    "field": _FIELD_HINTS,
    "as_secret": (" as the pass", " as my pass", " as your pass", " as a pass", " as pass", " as the pin",
                  " as my pin", " as pin"),
    "pair": ("login", "log-in", "creds", "credentials"),
    "said_password": ("password", "passcode", "passphrase", "pass word", "pwd", "passwd", " pw ", " pass "),
    "auth_pair": ("auth", "basicauth", "digestauth", "proxyauth"),
    "cookie_header": ("cookie:", "cookie :", "cookies:"),
    "named_value": ('"value"', "'value'", "value=", "value:", '"val"', "'val'"),
    **command_line.HINTS,
    **key_shapes.HINTS,
    **one_time_codes.HINTS,
    **url_tokens.HINTS,
}


# A value: quoted, one token, or after ": " a few words that run to the end of the line or clause ("password:
# correct horse battery staple").
_VALUE = (r"(?P<val>\\?\"(?:[^\"\\]|\\.)*\\?\"|'[^']*'|`[^`]*`"
          r"|(?<=: )(?:[^\s&\"',;<>.:=]+(?:\.[^\s&\"',;<>.:=]+)*[ \t]+){1,5}[^\s&\"',;<>.:=]+(?:\.[^\s&\"',;<>.:=]+)*"
          r"(?=[ \t]*(?:$|\n|[,;]|\.(?:\s|$)))|[^\s\"',;<>]+)")
# Atomic, and at most 8 parts of at most 41 characters: the parts could split a run of capitals and digits in exponentially many ways
# ("passwordsDE8937..." took seconds), and "token.token.token..." ran every name's suffix to the run's end
# (quadratic). A match always ends the suffix where no part can go on, so trying the longest only loses nothing.
_SUFFIX = r"(?:s?(?>(?:[_.\-]?[A-Z0-9][A-Za-z0-9]{0,40}|[_.\-][a-z0-9]{1,40}){0,8}))(?![a-z])"
# One pattern: a secret's name, then how the value follows it (assigned, said, or bare), then the value. Whether
# the name stands at a word start (or a camelCase hump) is checked after the match.
_SECRET_FIELD = re.compile(
    r"(?P<key>(?P<strong>" + nocase(_STRONG_WORDS) + ")" + _SUFFIX + "|(?P<weak>" + nocase(_WEAK_WORDS)
    + r")(?![A-Za-z]))"
    # password=..., "password": "...", PASSWORD := ..., api_key -> ..., ?pass=...
    # an accessibility snapshot's reference between them: '- textbox "Password" [ref=e12]: x' (Playwright MCP)
    r"(?:(?P<assign>[\"'\]\\]{0,3}(?:\s*\[(?:ref|bid|id|nth)=[^\]\s]{1,16}\])?(?:\s+(?:value|content)\s*)?\s*"
    r"(?::=|=>|->|==|=|:|：)\s*)"
    # a quoted name, then its quoted value as the next argument: setItem('token', 'x'), define('DB_PASSWORD', 'x')
    r"|(?P<arg>[\"'`]\s*,\s*)(?=[\"'`])"
    r"|(?P<tag>>)"  # <password>x</password>: checked after the match
    # "my password is x", "the PIN for the card was 1234", "Passwort lautet x", "mot de passe est x"
    r"|(?P<says>(?:\s+(?:" + nocase("for|of|to|on|at|de|du|für|del|da|van") + r")\s+\S+(?:\s+\S+){0,2}?)?"
    r"(?:\s+(?:" + nocase("I|we|you") + r")\s+(?:" + nocase("used|chose|set|picked|entered|typed|gave|use|have") + r"))?"
    r"\s+(?:" + nocase(r"is|was|will\s+be|should\s+be|set\s+to|changed\s+to|reset\s+to|lautet|ist|est|es|é|è|era|wordt"
                       r"|är|jest")
    + r")(?:\s+(?:" + nocase(r"now|still|changed\s+to|set\s+to|reset\s+to|updated\s+to|just|currently") + r"))?\s*:?\s+"
    r"|['’]s\s+(?=\S*\d)"  # "my password's Zq7...": a value with a digit
    r"|\s+-{1,2}\s+"  # "Password - x" (an en or em dash is a hyphen once normalized)
    # "Password for the admin account: x", "PIN for card 2: 1234": whose it is, then a colon
    r"|(?P<for_colon>\s+(?:" + nocase("for|of|to|on|at|de|du|für|del|da|van") + r")[ \t]+[^\s:=.,;!?]+(?:[ \t]+[^\s:=.,;!?]+){0,3}?"
    r"[ \t]*[:：][ \t]+)"  # within one clause of one line
    r"|\s*(?:是|为|為|は|는|은|:)\s*)"  # 密码是x, パスワードは x, 비밀번호는 x
    # "log in with password x", "use PIN 1234": the value must look like a secret then
    r"|(?P<bare>\s+))" + _VALUE)
_GENERAL_NAMES = frozenset({"secret", "secrets", "token", "tokens", "credential", "credentials", "key", "keys",
                            "authorization"})
_BARE_WEAK = re.compile(nocase("pin|cvv2?|cvc|otp"))
_SINGULAR_S = frozenset({"pass", "credentials", "access", "sms", "mnemonic"})  # names that end in s and name one value
_NAMES_A_FIELD = re.compile(r"[\"'`]?\s*(?::=|=>|=|:)")  # after a bare value: it was a name with a value
_EDGE = "()[]{}<>*.,:;!?\"'`\\"


# what follows "Pass:", "Session:", "Token:" on a product or a schedule: a quantity, a time, a count, a tier's words
_QUANTITY = re.compile(r"(?i)\d{1,4}(?:[-\s]?(?:days?|nights?|weeks?|months?|years?|hours?|hrs?|mins?|packs?|persons?|people"
                       r"|pieces?|pcs?|counts?|ct|ways?|stars?|seats?|tickets?|visits?|rides?|games?|passes?|parks?|in-1"
                       r"|adults?|kids?|children|users?|devices?)|[,.:]\d\d[\d,.:-]*)"
                       r"|[A-Z]?[a-z]+(?:-[A-Z]?[a-z]+)+")


def _looks_secret(value: str) -> bool:
    """A bare word after a secret's name that looks like a secret rather than prose (hunter2, S3cret!, 1234), not a
    quantity, a time or a tier ("3-Day", "10:30-11:45", "1,500", "Gold-Plus")."""
    core = value.strip(_EDGE)
    if _QUANTITY.fullmatch(core):
        return False
    has_digit = any(c.isdigit() for c in core)
    has_symbol = any(not c.isalnum() for c in core)
    mixed = any(c.isupper() for c in core[1:]) and any(c.islower() for c in core)
    return len(core) >= 4 and (has_digit or has_symbol or mixed)


# what a form or a settings page writes after a secret's name: a hint, an action, a status ("Password: At least 8
# characters", "Verification code: Resend", "Token: Copy to clipboard", "Passcode: Enabled"), a price ("Season Pass:
# $79.99") or a key chord ("Key: Ctrl+S")
_NO_VALUE = re.compile(
    r"(?i)(?:at least|minimum|min|maximum|max|must|should|re-?enter|re-?type|confirm|resend|send again|generate"
    r"|regenerate|create|copy|show|hide|reveal|change|reset|update|forgot|enter|type|click|tap|required|optional"
    r"|enabled|disabled|pending|approved|active|inactive|not set|on file|expired|expires|characters?|edit|manage"
    r"|view|add|remove|delete|revoke|rotate|set up|setup|learn more|paste|use|select|choose|verify|verified|unverified"
    r"|none|off|on|yes|no|not|n/a|data source)(?:\b(?![.\-_/@#$%&*+=]?\w)|\s)"
    r"|[$€£¥]\s?\d[\d,.]*(?:\s|$)|\d[\d,.]*\s?[$€£¥]$|\d{4}-\d\d-\d\d$|\d+\s*(?:-|to)\s*\d+\s+char"
    r"|(?:ctrl|control|alt|shift|cmd|command|option|opt|win|meta|fn)(?:\s*\+\s*[\w-]+)+$")


def _value_ok(value: str, strict: bool) -> bool:
    quoted = value[:1] in "\"'`" or value.startswith("\\\"")
    if "%" in value:
        value = unquote(value)  # judged as it reads: "?q=Pass%3A+%2449" is a price, "Keynote%2C" a word and a comma
    core = value.strip(_EDGE)
    folded = core.casefold()
    if not core or folded in NOT_VALUES or PLACEHOLDER.match(value.lstrip("\"'`")) or set(core) <= set("*•·●"):
        return False
    if not quoted and _NO_VALUE.match(core.lstrip("+")):
        return False
    if strict:
        return _looks_secret(value) or (quoted and len(core) >= 3)
    return quoted or not (core.isalpha() and core.islower() and folded.endswith(("ed", "ing")))


_CARD_CODE = re.compile(r"(?i)cvv2?|cvc2?|security[ _-]?code")


def _card_code(name: str, value: str) -> bool:
    """A card's 3-4 digit security code after its name ("CVV 123"): too short for `_looks_secret`, a secret all the same."""
    core = value.strip(_EDGE)
    return core.isdigit() and 3 <= len(core) <= 4 and _CARD_CODE.fullmatch(name) is not None


_OPEN_PLACEHOLDER = re.compile(r"\[[A-Z]+$")  # a placeholder whose "]" a strip took


def _mask_value(m: re.Match[str], strict: bool) -> str:
    """The match with its value replaced by [SECRET], or unchanged when the value is no secret."""
    value = m.group("val")
    if PLACEHOLDER.match(value.lstrip("\"'`\\")):
        return m.group(0)  # redacted already
    if value[:1] not in "\"'`\\":
        if " " in value and (strict or m.group("strong") is None):
            value = value.split(None, 1)[0]  # words after a weak name ("Pass: 3 days left") are prose: one token
        if m.start() and m.string[m.start() - 1] in "?&":
            value = value.split("&", 1)[0]  # a URL's query: "&" starts the next parameter
        value = value.rstrip(")]}.,:")  # a bracket or stop that closes the surrounding text
        if _OPEN_PLACEHOLDER.search(value):  # but not the bracket of a placeholder in the value ("bob/[SECRET]")
            value = m.group("val")[:len(value) + 1]
    if not value or not (_value_ok(value, strict) or _card_code(m.group("key"), value)):
        return m.group(0)
    if value.isdigit() and (len(value) <= 2 or re.match(r"[,.]\d{3}\b", m.string[m.end("val"):])):
        return m.group(0)  # "Token: 1,500 points": a count, not a code
    return m.group(0)[: m.start("val") - m.start()] + SECRET + m.group("val")[len(value):]


def _auth_pair(m: re.Match[str]) -> str:
    value = m.group("val")
    if PLACEHOLDER.match(value[1:]) or value[1:-1].startswith("$"):
        return m.group(0)
    return m.group(0)[: m.start("val") - m.start()] + value[0] + SECRET + value[-1]


def _scheme(m: re.Match[str]) -> str:
    if PLACEHOLDER.match(m.group(3)):
        return m.group(0)  # redacted already ("Bearer [SECRET]]": the bracket is the text's own)
    credential = m.group(3).rstrip(".)]}:")
    if m.group(1).casefold() == "bearer" or _looks_secret(credential):
        return m.group(1) + m.group(2) + SECRET + m.group(3)[len(credential):]
    return m.group(0)


# The value before its name ("use Tr0ub4dor&3 as the password") and a login's pair ("login bob / x", "creds bob:x"):
# looked for only where the name's hint is, the value taken when it looks like a secret.
_AS_SECRET = re.compile(r"(?i)(?P<verb>\b(?:use|used|using|enter|entered|type|typed|with)\s+)(?P<val>[^\s\"'`]{4,64})"
                        r"(?=\s+as\s+(?:the\s+|my\s+|your\s+|a\s+)?(?:password|passcode|passphrase|pin)\b)")
# A login pair handed to an HTTP client: requests' auth=("bob", "x"), HTTPBasicAuth("bob", "x"), aiohttp's BasicAuth
_AUTH_PAIR = re.compile(r"(?:\bauth\s*=\s*[(\[]|\b(?:HTTP)?(?:Basic|Digest|Proxy)Auth\s*\()\s*(?P<q>[\"'])[^\"'\n]{0,64}(?P=q)\s*,"
                        r"\s*(?P<val>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}')")
_PAIR = re.compile(r"(?i)\b(?:login|log-?in|creds|credentials)\s*:?\s+(?P<user>[^\s/:]{1,64})"
                   r"(?P<sep>\s*/\s*|:)(?P<val>[^\s]{4,64})")


# A password written as a plain word where a login is described ("log in with username bob and password bluefish",
# "(user: bob, password bluefish)", "enter password hunter to sign in"): after a word that hands the password over,
# or after a user name's value ("username bob, pw bluefish"), one word that ends its clause. Prose after the name
# ("password reset", "with password authentication", "email and password match") names a thing, a manner or a
# state, not a value: those words stay unless a user name's value stands before (a pair: "username bob and password
# blessing" is a login).
_PAIR_BEFORE = (r"\b(?:user(?:[ _-]?name)?|login|account|e-?mail|id)\b(?:\s*[:=]\s*|\s+)"
                r"(?!(?:and|or|with|field|box|input|is)\b)"
                r"[^\s,;:()&|/+]{2,64}\s*(?:,|;|&|\+|\||/|and)?\s*")
_SAID_PASSWORD = re.compile(
    r"(?i)(?:(?P<pair>" + _PAIR_BEFORE + r")|\b(?:with|using|and|plus|enter|entered|type|typed|input|use|used|via"
    r"|type\s+in|w/)\s*|[,(&|;]\s*|^\s*|(?<=\n)\s*|(?<=:)\s+)"
    r"(?P<name>(?:the\s+|my\s+|your\s+|a\s+)?(?:password|passcode|passphrase|pass\s?word|passwd|pwd"
    r"|(?<=[\s,(&|;])(?:pw|pass)(?=\s)))(?:\s+being|\s+of|'s|\s*,)?\s+(?P<val>[^\s\"'`]{3,64})(?=\s|$)")
# where the value's clause ends: a stop or a bracket glued to it, or after it the text's end, a dash, a bracket or a
# word that starts another clause
_CLAUSE_END = re.compile(r"[ \t]*(?:$|\r?\n|[-–—]\s|\(|(?:and|then|to|for|on|at|in|so|or|please|before|after|when|if|by|from|into"
                         r"|first|now|again|immediately|as|while|but|since|until|once|because|instead)\b)", re.I)
_CLOSING = ".,;:!?)]}"
_PASSWORD_PROSE = frozenset("""
reset field fields box page pages manager managers protection protected recovery change changes strength requirement
requirements rule rules policy hint hints link links form forms input prompt screen option options settings setting
section tab button entry login sign again here there below above twice first now then instead only too also correctly
manually once it them this that menu dialog popup window modal area text textbox expiry expiration history update
generator vault sharing less free list details info information email reminder help security safety question
questions length characters character provided given shown required saved stored you your from of yourself later
code number token key keys auth sync lock unlock fallback combo pair support match matches mismatch works work fails
fail succeeds alone please next anyway backwards unknown forgotten lost expired hidden masked visible meter written
chosen known given taken broken shown sent autofill autocomplete autosave toggle eye visibility
""".split())
# a word that names a thing or a state: "authentication", "complexity", "reminders", "written", "case-sensitive"
_PROSE_SHAPE = re.compile(r"[a-z]+(?:tion|sion|ity|ment|ness|ance|ence|ure|ed|ing|ly)|[a-z]+[^s]s|[a-z]+-[a-z-]+")


def _said_password(m: re.Match[str]) -> str:
    token = m.group("val")
    if PLACEHOLDER.match(token) or token[:1] in "([{<":
        return m.group(0)  # a detector before took it ("passphrase [SECRET]"), or a remark in brackets ("(hidden)")
    value = token.rstrip(_CLOSING)
    if len(value) < 3 or value == token and not _CLAUSE_END.match(m.string, m.end()):
        return m.group(0)  # the clause goes on: "password bluefish works" names no value it could be sure of
    folded = value.casefold()
    if folded in NOT_VALUES or PLACEHOLDER.match(value) or _NO_VALUE.match(value):
        return m.group(0)
    if m.group("pair") is None and (folded in _PASSWORD_PROSE or _PROSE_SHAPE.fullmatch(value)):
        return m.group(0)  # without a user name's value before it, a word of prose after the name is prose
    if m.group("pair") is not None and folded in _PASSWORD_PROSE and folded not in _PAIR_PLAIN:
        return m.group(0)
    return m.group(0)[: m.start("val") - m.start()] + SECRET + token[len(value):]


# words a pair's password may well be ("username bob and password blessing"): only a field's or a state's words are
# prose there ("username bob, password forgotten", "email bob@x and password field")
_PAIR_PLAIN = frozenset("help security login lock support match works".split())


def _after_name(m: re.Match[str]) -> str:
    value = m.group("val").rstrip(".,;)]}")
    plain = "verb" in m.re.groupindex and value.casefold() not in _PASSWORD_PROSE | NOT_VALUES \
        and not _PROSE_SHAPE.fullmatch(value)  # "enter bluefish as the password": named a password, it is one
    if not (_looks_secret(value) or plain) or PLACEHOLDER.match(value):
        return m.group(0)
    return m.group(0)[: m.start("val") - m.start()] + SECRET + m.group("val")[len(value):]


def _inside_word(text: str, start: int) -> bool:
    """Whether a name at `start` continues a word (bypass, PASSPORT); a camelCase hump (userPassword) starts one."""
    prev = text[start - 1] if start else " "
    if ord(text[start]) >= 0x2E80:  # Chinese, Japanese, Korean: no spaces between words ("您的验证码是...")
        return False
    return prev.isalnum() and not (text[start].isupper() and (prev.islower() or prev.isdigit()))


def _secret_field(m: re.Match[str]) -> str:
    if _inside_word(m.string, m.start()) or m.string.endswith(("'s ", "’s "), 0, m.start()):
        return m.group(0)  # bypass, PASSPORT; a brand's name ("Victoria's Secret: ...")
    if m.group("key").lower() == "secret" and m.group("assign") is not None and " " in m.group("val").strip():
        return _mask_value(m, strict=True)  # "Secret: Clinical Strength" names a product; a secret looks like one
    if m.group("arg") is not None:  # a value that looks like one, one token: not t('password', 'Your password'),
        core = m.group("val")[1:-1]  # setItem('session', 'dark'); a selector (fill('#pinCode', ...)) names a
        selector = m.start() and m.string[m.start() - 1] in "#.[=:"  # field: condenser.typed_fields judges its value
        return _mask_value(m, strict=True) if " " not in core and _looks_secret(core) and not selector else m.group(0)
    if m.group("tag") is not None:  # an element named for a secret, its text the value, closed right after it
        closed = m.start() and m.string[m.start() - 1] == "<" and m.string.startswith("</", m.end())
        return _mask_value(m, strict=m.group("weak") is not None) if closed else m.group(0)
    if m.group("assign") is not None:
        # a weak name before a colon ("Key: Enter", "Pass: 3 days") needs a value that looks like a secret, and so
        # does a name in the plural, a heading's ("API Keys: manage your keys", "Passwords: Saved on this device")
        colon = (":" in m.group("assign") or "：" in m.group("assign")) and "=" not in m.group("assign")
        plural = m.group("key")[-1:] in "sS" and m.group("strong") is not None and m.group("key")[-2:-1].isalpha() \
            and m.group("key").casefold() not in _SINGULAR_S
        general = m.group("key").casefold() in _GENERAL_NAMES  # "Token: USDC", "Credentials: MD, PhD"
        return _mask_value(m, strict=colon and (m.group("weak") is not None or plural or general))
    if m.group("says") is not None:
        dash = m.group("says").strip().startswith("-")  # "Password - x": a strong name, a value that looks secret
        if dash and m.group("weak") is not None:  # "Annual Pass - Further Information"
            return m.group(0)
        # after "for ...:" a weak, plural or general name needs a value that looks secret ("Pin for later: ideas",
        # "Secret for success: hard work"); a password's runs to the end of its clause
        loose = m.group("weak") is not None or m.group("key").casefold() in _GENERAL_NAMES  # "The secret is
        # consistency", "the session was Thursday": a general or weak name said of a word needs a value that looks secret
        return _mask_value(m, strict=dash or loose)
    if m.group("weak") is not None and not _BARE_WEAK.fullmatch(m.group("weak")):
        return m.group(0)
    if _NAMES_A_FIELD.match(m.string, m.end()):
        return m.group(0)  # '--password-stdin\n"client_secret": "x"': the word after a name names a field of its own
    return _mask_value(m, strict=True)


# A secret held as a name and a value in two slots of one object or element (HAR headers, a cookie list, Postman,
# .NET and Java config): {"name": "X-Api-Key", "value": "..."}, {"key": "password", "value": "..."}, <add
# key="ApiKey" value="..."/>. The value goes when the name names a secret (a cookie's or a session's: any name).
_NAMED_VALUE = re.compile(
    r"""(?P<head>["']?(?:name|key|field|id|header)["']?\s*[:=]\s*(?P<q>["'])(?P<name>[^"'\n]{1,80})(?P=q)\s*,?\s*"""
    r"""(?:["']?(?:type|kind|domain|path)["']?\s*[:=]\s*["'][^"'\n]{0,80}["']\s*,?\s*)?"""
    r"""["']?(?:value|val|content)["']?\s*[:=]\s*)(?P<val>"(?:[^"\\\n]|\\.)*"|'[^'\n]*')""", re.I)
_SECRET_NAME = re.compile(nocase(_STRONG_WORDS) + "|" + nocase(r"\b(?:pass|pw|pin|cvv2?|cvc2?|otp|cookies?|session"
                                                              r"|sessionid|sid|auth|key|signature|sig)\b"))
_SESSION_LIST = re.compile(r"(?i)cookies?\s*[\"']?\s*[:=]\s*\[")  # a list of a browser's cookies: every value


def _named_value(m: re.Match[str]) -> str:
    value = m.group("val")[1:-1]
    name = re.sub(r"(?<=[a-z])(?=[A-Z])|[_.\-]+", " ", m.group("name"))
    in_cookies = _SESSION_LIST.search(m.string, max(0, m.start() - 400), m.start()) is not None
    if not value or PLACEHOLDER.fullmatch(value) or not (_SECRET_NAME.search(name) or in_cookies and len(value) >= 8):
        return m.group(0)
    return m.group("head") + m.group("val")[0] + SECRET + m.group("val")[-1]


# A Cookie or Set-Cookie header: every pair's value that looks generated is a session's secret, whatever its name
# (li_at, SAPISID, __Secure-1PSID, .AspNetCore.Identity.Application); "theme=dark" and a cookie's attributes stay
_COOKIE_HEADER = re.compile(r"(?i)\b(?:set-)?cookies?\s*:[ \t]*(?P<pairs>[^\n\r]*)")
_COOKIE_PAIR = re.compile(r"(?P<name>[^=;,\s]+)=(?P<val>\"[^\"\n]*\"|[^;,\s]*)")
_COOKIE_ATTRIBUTES = frozenset({"path", "domain", "expires", "max-age", "samesite", "priority", "version", "comment"})


def _cookie_header(m: re.Match[str]) -> str:
    def pair(p: re.Match[str]) -> str:
        value = p.group("val").strip('"')
        if p.group("name").lower() in _COOKIE_ATTRIBUTES or PLACEHOLDER.fullmatch(value) or not (
                len(value) >= 16 or (len(value) >= 6 and _looks_secret(value))):
            return p.group(0)
        return f"{p.group('name')}={SECRET}"

    return m.group(0)[: m.start("pairs") - m.start()] + _COOKIE_PAIR.sub(pair, m.group("pairs"))


def redact_credentials(text: str, hits: Hits | None, refind: Callable[[str], Hits | None] | None = None) -> str:
    """`text` with every credential replaced by [SECRET]; `hits` from `Hints.find` (None: look everywhere), found
    again with `refind` once a replacement has moved them (without it: everywhere)."""
    if hits == {} and not ("://" in text and "@" in text) and not url_tokens.may_carry_query_token(text):
        return text  # no hint word and neither detector that needs none can match: most texts of a run
    found = text

    def starts_in(now: str, group: str) -> list[int] | None:
        """Where `group`'s hints are in `now`, the text as a detector has it."""
        nonlocal found, hits
        if now != found:  # the offsets are of the text before a replacement
            found, hits = now, refind(now) if refind is not None else None
        return None if hits is None else hits.get(group, [])

    def starts(group: str) -> list[int] | None:
        return starts_in(text, group)

    def wanted(group: str) -> bool:
        return starts(group) != []

    if wanted("pem"):
        # a block runs to its END line or the end of the text: its start is looked for near the hint only
        text = substitute_at(text, _PEM, lambda m: SECRET, starts("pem"), back=40, ahead=len(text), head=_PEM_HEAD)
    if "://" in text and "@" in text:
        text = _URL_CREDENTIALS.sub(lambda m: m.group(1) + SECRET + m.group(3), text)
    text = key_shapes.redact_key_shapes(text, starts_in)
    if wanted("scheme"):
        text = substitute_at(text, _SCHEME, _scheme, starts("scheme"))
    if wanted("as_secret"):
        text = substitute_at(text, _AS_SECRET, _after_name, starts("as_secret"), back=90, ahead=30)
    if wanted("auth_pair"):
        text = substitute_at(text, _AUTH_PAIR, _auth_pair, starts("auth_pair"), back=16, ahead=260)
    if wanted("named_value"):
        text = substitute_at(text, _NAMED_VALUE, _named_value, starts("named_value"), back=200, ahead=400)
    if wanted("cookie_header"):
        text = substitute_at(text, _COOKIE_HEADER, _cookie_header, starts("cookie_header"), back=12)
    if wanted("pair"):
        text = substitute_at(text, _PAIR, _after_name, starts("pair"), ahead=160)
    text = url_tokens.redact_url_tokens(text, starts_in)
    text = one_time_codes.redact_one_time_codes(text, starts_in)
    text = command_line.redact_command_lines(text, starts_in)
    if wanted("field"):
        field = starts("field")  # a name inside a word is passed over before its value is read (to the end of a
        # text of "xpw=\\"" repeated: quadratic)
        text = substitute_at(text, _SECRET_FIELD, _secret_field,
                             None if field is None else [i for i in field if not _inside_word(text, i)])
    if wanted("said_password"):  # after the names' own values: a value that looks like a secret is theirs, whole
        text = substitute_at(text, _SAID_PASSWORD, _said_password, starts("said_password"), back=96, ahead=90)
    return text
