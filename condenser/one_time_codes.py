"""One-time codes in a message's words, with no field name before them: "Your code is 482913", "G-482913 is your
Google verification code", "Tu código de verificación es 482913", "您的验证码是482913". Called from
`condenser.credentials`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable

from condenser.placeholders import SECRET
from condenser.scan import substitute_at

# One-time codes in a message's words, with no field name before them: "Your code is 482913", "G-482913 is your Google
# verification code", "Use 482913 to sign in", "Enter 482913 to verify". Only a 4-8 digit code (G- and similar
# prefixes kept out of the value).
_PUBLIC_WORDS = (r"zip|postal|promo|coupon|discount|gift|voucher|tracking|order|booking|confirmation|reservation"
                 r"|product|style|hs|reference|course|item|model|part|store|flight|class|tax|area|country|referral|invite"
                 # classifications and statuses ("The error code is 10054", "The NAICS code is 541511")
                 r"|error|status|exit|response|http|naics|sic|cpt|icd|diagnosis|procedure|billing|classification|industry"
                 r"|tariff|commodity|sku|color|colour|language|currency|airport|iata|region|state|vat|event|source|ean"
                 r"|upc|isbn|swift|bic|routing|branch|city|department|dialing|dial|fare|unit|lot|batch|serial|catalog"
                 r"|program|subject|post|return|reason|fault|result|project|account|customer|member|ticket|case|invoice")
_OTP_PROSE = re.compile(
    r"(?i)\b(?:your|the|this|a)\s+(?:(?!" + _PUBLIC_WORDS + r")\w+\s+){0,2}(?:code|otp|passcode|pin)(?:\s+(?:is|was)|\s*:)\s*:?\s*(?:[A-Z]{1,2}-)?(?P<a>\d{4,8}|\d{3}[ -]\d{3}|\d\d \d\d \d\d)\b"
    r"|\b(?:[A-Z]{1,2}-)?(?P<b>\d{4,8})\s+is\s+(?:your|the)\s+(?:\w+\s+){0,3}?(?:verification|security|login|sign-?in"
    r"|one-time|authentication|auth|access|2fa|mfa|otp)\s+(?:code|pin|number|password)\b"
    r"|\b(?:use|enter|type)\s+(?:(?:the\s+)?(?:code|otp|pin|passcode)\s+)?(?:[A-Z]{1,2}-)?(?P<c>\d{4,8})\s+(?:to|for)\s+(?:sign\s*in|log\s*in|sign\s*on|verify|confirm"
    r"|authenticate|complete (?:your )?(?:sign|log)\s*in|reset)\b"
    # "482913 is your Instagram code": a code of a named service, not a place's or an order's
    r"|\b(?:[A-Z]{1,2}-)?(?P<e>\d{4,8})\s+is\s+your\s+(?:(?!" + _PUBLIC_WORDS + r")\w+\s+){0,2}(?:code|pin|passcode)\b"
    # the agent's own words: "Enter code 482913", "I entered the code 482913", "the code I received is 482913", "code
    # 482913 expires in 10 minutes", "Verification code 482 913" (not an offer's: "Use code 2024 for 10% off")
    r"|\b(?:enter|use|type|input|submit|entered|typed|used|submitted|received|got)\s+(?:the\s+|this\s+|a\s+)?"
    r"(?:(?:verification|security|one-time|sms|text|login|sign-in|2fa|mfa|auth|access|confirmation)\s+)?code\s*:?\s*"
    r"(?P<f>\d{4,8}|\d{3}[ -]\d{3})\b(?!\s*(?:for\s+\d+\s*%|%|off\b|at\s+checkout))"
    r"|\b(?:the|your|this)\s+code\s+(?!of\b)(?:(?!" + _PUBLIC_WORDS + r")\w+\s+){1,3}?(?:is|was)\s*:?\s*"
    r"(?!(?:19|20)\d\d\b)(?P<g>\d{4,8}|\d{3}[ -]\d{3})\b"
    r"|\bcode\s+(?P<h>\d{4,8})\s+(?:expires|is valid|will expire|valid for)\b"
    r"|\b(?:verification|security|one-time|sms|login|2fa|mfa|auth)\s+code\s*:?\s*(?P<i>\d{3}[ -]\d{3})\b"
    r"|(?<![\w-])code\s*:\s*(?P<j>\d{3}-\d{3})\b"
    # a red team of 2026-12-07: "Enter 482913 on the sign-in page", "2FA: 482913", "Code: 482913 (expires in 10 min)"
    r"|\b(?:enter|type|use|input)\s+(?P<k>\d{4,8})\s+(?:on|in|into|at)\s+the\s+(?:sign|log)[\s-]?in\b"
    r"|\b(?:2fa|mfa|otp|totp|2-step|two-factor|sms)(?:\s+code)?\s*[:=]\s*(?P<l>\d{4,8})\b"
    r"|(?<![\w-])code\s*:\s*(?P<m>\d{4,8})\s*\(?\s*(?:expires|valid|do not share|don't share)")
# The same in other languages: a word that names a one-time code ("código de verificación", "Bestätigungscode",
# "код подтверждения"), or "your code" ("tu código", "Ihr Code"), then a few words, "is" or a colon, and the code;
# or the code first ("482913 es tu código de verificación").
_OTP_NAMES = (
    r"c[óo]digo\s+de\s+(?:verificaci[óo]n|verifica[çc][ãa]o|seguran[çc]a|seguridad|acceso|acesso|confirmaci[óo]n"
    r"|confirma[çc][ãa]o|autenticaci[óo]n|autentica[çc][ãa]o|inicio\s+de\s+sesi[óo]n|un\s+solo\s+uso)"
    r"|code\s+de\s+(?:v[ée]rification|confirmation|s[ée]curit[ée]|connexion|validation)"
    r"|(?:best[äa]tigungs|sicherheits|verifizierungs|einmal|anmelde|zugangs|authentifizierungs|verificatie|bevestigings)code"
    r"|codice\s+(?:di\s+)?(?:verifica|sicurezza|accesso|conferma|otp)|kod\s+(?:weryfikacyjny|potwierdzaj[ąa]cy|dost[ęe]pu"
    r"|sms|jednorazowy)|(?:проверочный|одноразовый)\s+код|код\s+(?:подтверждения|проверки|доступа|из\s+смс)"
    r"|kode\s+(?:verifikasi|otp|keamanan)|m[ãa]\s+(?:x[áa]c\s+(?:minh|nh[ậa]n)|otp|b[ảa]o\s+m[ậa]t)"
    r"|(?:doğrulama|dogrulama|onay|güvenlik|guvenlik)\s+kod\w*|bekr[äa]ftelsekod|verifieringskod|engangskode"
    r"|vahvistuskoodi|einmalpasswort|best[äa]e?tigungscode|mã xác thực|ma xac thuc"
    r"|(?:tu|su|seu|sua|votre|ton|ihr|dein|tuo|twój|twoj|ваш|твой|uw|je)\s+(?:c[óo]digo|code|codice|kod|код)"
    r"|код(?=\s*:)")
# what makes a code public in those languages: a postal code, an order's, a promotion's, a booking's, a parcel's
_PUBLIC_WORDS_I18N = (r"(?:postal|post|pedido|promoci[óo]n|promo|descuento|producto|reserva|seguimiento|cup[óo]n|barras"
                      r"|commande|r[ée]duction|promotionnel|suivi|bestell\w*|gutschein|rabatt\w*|sendungs\w*"
                      r"|postleitzahl|ordine|sconto|prodotto|prenotazione|zam[óo]wienia|rabatowy|pocztowy|заказа|скидки"
                      r"|купона|почтовый|pesanan|diskon|pos|sipari[şs]|indirim|posta|de\s+(?:pedido|promoci[óo]n"
                      r"|descuento|producto|reserva|seguimiento|cup[óo]n|barras|commande|r[ée]duction|suivi))\b")
_OTP_I18N = re.compile(
    r"(?i)\b(?:" + _OTP_NAMES + r")(?:\s+(?!" + _PUBLIC_WORDS_I18N + r")[^\s\d:：]+){0,3}?\s*(?:\s(?:es|est|ist|lautet|è|é|to|jest|adalah|là|är|er"
    r"|on|era|était|war|is)\b|[:：—]|(?=\s\d))\s*:?\s*(?:[A-Z]{1,2}-)?(?P<a>\d{4,8})\b"
    r"|\b(?P<b>\d{4,8})\s+(?:(?:es|est|ist|è|é|to|jest|är|er|adalah|là|is)\s+|[—–-]\s+)?(?:your\s+|ваш\s+)?(?:"
    + _OTP_NAMES + r")"
    # Chinese, Japanese, Korean: the name, a particle or none, the code ("验证码是482913", "【淘宝】验证码482913")
    r"|(?:验证码|驗證碼|校验码|动态码|認証コード|確認コード|인증번호|인증 번호)\s*(?:是|为|為|は|는|:|：)?\s*(?P<c>\d{4,8})(?!\d)")


def _otp(m: re.Match[str]) -> str:
    name = next(g for g in ("a", "b", "c", "e", "f", "g", "h", "i", "j", "k", "l", "m") if g in m.re.groupindex and m.group(g) is not None)
    return m.group(0)[: m.start(name) - m.start()] + SECRET + m.group(0)[m.end(name) - m.start():]


# where each detector here is looked for (`condenser.scan.Hints`)
HINTS = {
    "otp": ("code", "otp", "passcode", "pin ", "2fa", "mfa", "totp", "2-step", "two-factor", "sms", " on the sign",
            " on the log", " in the sign", " into the sign", " to sign", " to log", " to verify", " to confirm", " to authenticate",
            " to reset", " to complete", " for sign", " for log"),
    "otp_i18n": ("código", "codigo", "codice", "kod", "код", "mã", "ma xac", "einmalpasswort", "bestaetigungscode",
                 "验证码", "驗證碼", "校验码", "动态码", "認証コード", "確認コード", "인증번호", "인증 번호", "doğrulama", "dogrulama", "onay", "verificatiecode",
                 "bevestigingscode", "bekräftelsekod", "verifieringskod", "engangskode", "vahvistuskoodi",
                 "bestätigungscode", "sicherheitscode", "verifizierungscode", "einmalcode", "anmeldecode", "zugangscode",
                 "authentifizierungscode", "code de", "votre code", "ton code", "ihr code", "dein code", "uw code",
                 "je code"),
}


_TWO_DIGITS = re.compile(r"(?=\d\d)")  # where two digits in a row start (each code above holds some)


def _near_digits(text: str, hints: list[int] | None, back: int, ahead: int) -> list[int] | None:
    """The hints whose window (`back` before, `ahead` after) holds two digits in a row: no code can match in the
    others, so their searches are skipped (the patterns are case-insensitive alternations: about 60 µs a window,
    and an agent's thoughts say "to complete" and "to confirm" at every step, most with no number near)."""
    if not hints:
        return hints
    pairs = [m.start() for m in _TWO_DIGITS.finditer(text)]
    return [h for h in hints if (i := bisect_left(pairs, h - back)) < len(pairs) and pairs[i] <= h + ahead]


def redact_one_time_codes(text: str, starts: Callable[[str, str], list[int] | None]) -> str:
    """`text` with the one-time codes in its prose replaced by [SECRET]; `starts(text, group)`: where a group's hints
    are in `text` as it is now (None: look everywhere; []: nowhere)."""
    if starts(text, "otp") != [] and (near := _near_digits(text, starts(text, "otp"), 40, 80)) != []:
        text = substitute_at(text, _OTP_PROSE, _otp, near, back=40, ahead=80)
    if starts(text, "otp_i18n") != [] and (near := _near_digits(text, starts(text, "otp_i18n"), 40, 100)) != []:
        text = substitute_at(text, _OTP_I18N, _otp, near, back=40, ahead=100)
    return text
