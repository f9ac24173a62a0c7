"""A red team of 2026-12-07 (the second) put secrets past the redaction, and ordinary text under it: each class closed
here, through `redact_trajectory` as ingest calls it."""

from __future__ import annotations

import pytest

from condenser import Trajectory
from condenser.redact import redact_text, redact_trajectory

PW = "Zq7mPw9xL4"


def _leaks(text: str, secret: str) -> bool:
    """Whether `secret` survives `text` put in every text field of a step (and the task)."""
    run = Trajectory.model_validate({"task": f"Check {text}", "steps": [
        {"action": "click(index=1)", "thought": text, "observation": text, "error": text}]})
    return secret in redact_trajectory(run).model_dump_json()


@pytest.mark.parametrize("text,secret", [
    # an escaped separator glued to the secret: JSON's "\n" and "\t", a link's "%20"
    ('{"body": "creds\\nAKIAIOSFODNN7EXAMPLE"}', "AKIAIOSFODNN7EXAMPLE"),
    ('{"body": "line1\\npassword: ' + PW + '"}', PW),
    ('{"log": "login ok\\ttoken=' + PW + '"}', PW),
    ('{"msg": "SSN\\n536-22-8726"}', "536-22-8726"),
    ('{"body": "x\\npin: 4821"}', "4821"), ('{"text": "Your code:\\n482913"}', "482913"),
    ('{"body": "Call\\n(415) 555-0199"}', "555-0199"), ('{"body": "IBAN:\\nDE89 3704 0044 0532 0130 00"}', "0532 0130"),
    ("https://x.com/notes?text=key%20sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "abcdefghijklmnop"),
    ("https://mail.google.com/mail/u/0/#search/ssn%20536-22-8726", "536-22-8726"),
])
def test_a_secret_after_an_escaped_separator_is_found(text, secret):
    assert _leaks(text, secret) is False


@pytest.mark.parametrize("key", [
    "glptt-4b8c00713c8940d9fb1a0121bddcf50f562d625d", "xoxc-98599256546-351661856640-5917325979438-212d1066396e",
    "xoxr-569396279500-IMmPBtW89IuXz3wo6t5CLy9OyjN0rWVpy0Tf", "sess-dK9xfGxtsVcQxgiFeax0Tese2RQ3oufr5Cersl1z",
    "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", "sntryu_" + "ab12" * 16, "LTAI5t6t9NzZWvTlcIN3z6gB",
    "AKIDBzoCWOeoaTTHlzrWMLvqCleaIOquCbOs", "pat-na1-70b5fa39-39c1-e8fd-a974-f9d0eadcbf2f",
    "sb_secret_QQT2bmVO_9Q_vpWt8jSYEo6NmWLGFD73", "rubygems_" + "4bab0829d2362da2a6e3eca5c721f05184610f9a64540375",
    "sk_8a56ef42433de1c2b0d1c1c7da88a6e154ae7123154cab37", "rnd_WhQJbjxsX8XdS4OjcY3tXyZyk4WsrIjT",
    "https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage",
])
def test_more_vendor_keys_are_known_by_their_prefix(key):
    assert _leaks(f"saw {key} in the settings page", key[-12:]) is False


@pytest.mark.parametrize("text", [
    f"Parolă: {PW}", f"Токен: {PW}", f"API-Schlüssel: {PW}", f"Clé API : {PW}", f"令牌: {PW}", f"토큰: {PW}",
    f"Lozinka: {PW}", f"Contrasenya: {PW}", f"access_token={PW}", f"?accesstoken={PW}",
    f"my password's {PW}", f"The password was changed to {PW}", f"password is now {PW}",
    f"the password I used was {PW}",
])
def test_a_secret_named_in_more_languages_and_phrasings_is_found(text):
    assert PW not in redact_text(text)


@pytest.mark.parametrize("text,code", [
    ("Enter 482913 on the sign-in page", "482913"), ("2FA: 482913", "482913"),
    ("Code: 482913 (expires in 10 minutes)", "482913"),
])
def test_more_one_time_codes_are_found(text, code):
    assert code not in redact_text(text)


@pytest.mark.parametrize("text", [
    "The secret is consistency.", "The token was Solana", "the session was Thursday",
    "Password: At least 8 characters", "Confirm password: Re-enter password", "Verification code: Resend",
    "API Key: Generate new key", "Token: Copy to clipboard", "Credentials: MD, PhD", "Authorization: Pending",
    "Passcode: Enabled", "Season Pass: $79.99", "Cookie: $2.50", "Token: USDC", "Key: Ctrl+S",
    "The error code is 10054", "The NAICS code is 541511", "The CPT code is 99213", "Invoice 240315-0042",
    "Case 231104-1187", "ensuring the session is safely concluded",
])
def test_ordinary_text_beside_those_names_stays(text):
    assert redact_text(text) == text


def test_a_secret_still_reads_as_one_after_those_names():
    assert redact_text(f"Password: {PW}") == "Password: [SECRET]"
    assert redact_text("Token: abcd1234efgh") == "Token: [SECRET]"
    assert redact_text("Password: Enter123") == "Password: [SECRET]"
    assert redact_text("CPR: 010190-1234") == "CPR: [ID]"


@pytest.mark.parametrize("field", ["#token", "#securityAnswer", "#mothersMaidenName", "#memorableWord",
                                   "#accountNumber"])
def test_a_value_typed_into_a_field_named_for_a_secret_is_masked_everywhere(field):
    run = Trajectory.model_validate({"task": "Update my profile", "steps": [
        {"action": f"fill('{field}', 'Fluffy2019')"}, {"action": "click(index=3)", "observation": "saved Fluffy2019"}]})
    assert "Fluffy2019" not in redact_trajectory(run).model_dump_json()


@pytest.mark.parametrize("text", [f"Parolă: {PW}", f"The password was changed to {PW}", "Enter 482913 on the sign-in page",
                                  f"my password is now {PW}"])
def test_a_secret_in_a_link_s_encoded_words_is_found(text):
    from urllib.parse import quote, quote_plus

    for url in (f"https://shop.example.com/search?q={quote_plus(text)}", f"https://shop.example.com/{quote(text)}"):
        out = redact_text(url)
        assert PW not in out and "482913" not in out, out


@pytest.mark.parametrize("url", [
    "https://www.amazon.com/errors/validateCaptcha?amzn=%2BxV0uwIzLq5ulCznBlJjPw%3D%3D&amzn-r=%2F&field-keywords=",
    "https://shop.example.com/search?q=red+shoes+size+10", "https://shop.example.com/search?q=Season+Pass%3A+%2479.99",
    "https://shop.example.com/search?q=Session%3A+Keynote%2C+Hall+B", "https://cdn.example.com/static/logo@2x.png",
])
def test_an_encoded_link_without_a_secret_stays_as_it_came(url):
    assert redact_text(url) == url


@pytest.mark.parametrize("text", ["DSN: Data Source Name", "Private key: Not provided", "Session: 2024-03-15",
                                  "Password: 8-20 characters, 1 number"])
def test_a_form_s_or_a_page_s_words_after_a_secret_s_name_stay(text):
    assert redact_text(text) == text
