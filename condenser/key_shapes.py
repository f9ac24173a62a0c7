"""Secrets known by their shape alone, with no name before them: vendor keys by their prefix (`sk-proj-`, `ghp_`,
`AKIA`, `hvs.`, a webhook's address), Telegram bot tokens, password hashes (bcrypt, crypt, Argon2, PBKDF2) and a
wallet's recovery phrase after its name. Called from `condenser.credentials`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from condenser.placeholders import SECRET
from condenser.scan import substitute_at

# Keys whose vendor prefix says what they are: (prefix, rest), the rest of the token included whatever its
# length (a fixed-length pattern would leave the tail of a longer key). The prefixes are the hint words.
_PREFIXED_KEYS = [
    ("sk-", r"[A-Za-z0-9_\-]{16,}"),  # OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-api03-), DeepSeek
    ("sk_live_", r"[A-Za-z0-9]{10,}"), ("sk_test_", r"[A-Za-z0-9]{10,}"),  # Stripe
    ("rk_live_", r"[A-Za-z0-9]{10,}"), ("rk_test_", r"[A-Za-z0-9]{10,}"), ("whsec_", r"[A-Za-z0-9]{20,}"),
    ("ghp_", r"[A-Za-z0-9]{20,}"), ("gho_", r"[A-Za-z0-9]{20,}"), ("ghu_", r"[A-Za-z0-9]{20,}"),
    ("ghs_", r"[A-Za-z0-9]{20,}"), ("ghr_", r"[A-Za-z0-9]{20,}"), ("github_pat_", r"[A-Za-z0-9_]{20,}"),
    ("glpat-", r"[A-Za-z0-9_\-]{20,}"), ("gldt-", r"[A-Za-z0-9_\-]{20,}"), ("glrt-", r"[A-Za-z0-9_\-]{20,}"),
    ("AKIA", r"[0-9A-Z]{16}"), ("ASIA", r"[0-9A-Z]{16}"), ("ABIA", r"[0-9A-Z]{16}"), ("ACCA", r"[0-9A-Z]{16}"),
    ("xoxb-", r"[A-Za-z0-9\-]{10,}"), ("xoxp-", r"[A-Za-z0-9\-]{10,}"), ("xoxa-", r"[A-Za-z0-9\-]{10,}"),
    ("xoxe-", r"[A-Za-z0-9.\-]{10,}"), ("xoxs-", r"[A-Za-z0-9\-]{10,}"), ("xapp-", r"[A-Za-z0-9\-]{10,}"),
    ("hooks.slack.com/services/", r"[A-Za-z0-9/_]{20,}"),
    ("AIza", r"[0-9A-Za-z_\-]{30,}"), ("ya29.", r"[0-9A-Za-z_\-]{20,}"), ("GOCSPX-", r"[A-Za-z0-9_\-]{20,}"),
    ("hf_", r"[A-Za-z0-9]{30,}"), ("npm_", r"[A-Za-z0-9]{30,}"), ("pypi-", r"[A-Za-z0-9_\-]{50,}"),
    ("SG.", r"[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"), ("shpat_", r"[A-Fa-f0-9]{32}"),
    ("shpss_", r"[A-Fa-f0-9]{32}"), ("dop_v1_", r"[a-f0-9]{64}"), ("dapi", r"[a-f0-9]{32}"),
    ("dp.pt.", r"[A-Za-z0-9]{40,}"), ("lin_api_", r"[A-Za-z0-9]{40}"), ("PMAK-", r"[A-Za-z0-9\-]{40,}"),
    ("sq0atp-", r"[A-Za-z0-9_\-]{22,}"), ("sq0csp-", r"[A-Za-z0-9_\-]{40,}"), ("gsk_", r"[A-Za-z0-9]{40,}"),
    ("xai-", r"[A-Za-z0-9]{60,}"), ("r8_", r"[A-Za-z0-9]{30,}"), ("pplx-", r"[A-Za-z0-9]{40,}"),
    ("nvapi-", r"[A-Za-z0-9_\-]{40,}"), ("glsa_", r"[A-Za-z0-9_]{32,}"), ("ATATT", r"[A-Za-z0-9_\-=]{50,}"),
    ("sntrys_", r"[A-Za-z0-9+/=_]{40,}"), ("AGE-SECRET-KEY-1", r"[0-9A-Z]{50,}"), ("EAA", r"[A-Za-z0-9]{60,}"),
    ("eyJ", r"[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),  # JWT (an unsigned one too)
    # HashiCorp Vault, Doppler, Notion, Docker Hub, Supabase, Mailgun, Pinecone, Tailscale, PlanetScale, Figma,
    # New Relic, Heroku, Brevo, Netlify, Shopify's app and partner tokens, Grafana Cloud, Mapbox's secret keys
    ("hvs.", r"[A-Za-z0-9_\-]{24,}"), ("hvb.", r"[A-Za-z0-9_\-]{24,}"), ("dp.st.", r"[A-Za-z0-9_\-]{40,}"),
    ("dp.ct.", r"[A-Za-z0-9]{40,}"), ("dp.sa.", r"[A-Za-z0-9]{40,}"), ("dp.scim.", r"[A-Za-z0-9]{40,}"),
    ("secret_", r"[A-Za-z0-9]{43}"), ("ntn_", r"[A-Za-z0-9]{40,}"), ("dckr_pat_", r"[A-Za-z0-9_\-]{20,}"),
    ("sbp_", r"[a-f0-9]{40}"), ("key-", r"[a-f0-9]{32}"), ("pcsk_", r"[A-Za-z0-9_]{40,}"),
    ("tskey-", r"[A-Za-z0-9\-]{30,}"), ("pscale_tkn_", r"[A-Za-z0-9_\-]{30,}"),
    ("pscale_pw_", r"[A-Za-z0-9_\-]{30,}"), ("figd_", r"[A-Za-z0-9_\-]{30,}"), ("NRAK-", r"[A-Z0-9]{27}"),
    ("HRKU-", r"[A-Za-z0-9_\-]{30,}"), ("xkeysib-", r"[a-f0-9]{64}"), ("nfp_", r"[A-Za-z0-9]{30,}"),
    ("shpca_", r"[A-Fa-f0-9]{32}"), ("shppa_", r"[A-Fa-f0-9]{32}"), ("glc_", r"[A-Za-z0-9+/=_\-]{30,}"),
    ("sk.eyJ", r"[A-Za-z0-9_\-.]{30,}"),
    # a red team of 2026-12-07: Slack's other tokens, GitLab's, DigitalOcean's OAuth, Alibaba, Tencent, HubSpot,
    # Contentful, LangSmith, Sentry's user tokens, New Relic ingest, JFrog, RubyGems, NuGet, Pulumi, Dropbox, Google
    # refresh tokens, Linear OAuth, OpenAI sessions, Supabase secrets, Resend, npm-style napi, Shippo, Braintree,
    # Bitbucket, Render, SonarQube, CircleCI, Buildkite, Prefect, Plaid, ElevenLabs, Firebase messaging, Twitch
    ("xoxr-", r"[A-Za-z0-9\-]{10,}"), ("xoxc-", r"[A-Za-z0-9\-]{10,}"), ("xoxd-", r"[A-Za-z0-9%\-]{20,}"),
    ("glptt-", r"[A-Za-z0-9_\-]{20,}"), ("glft-", r"[A-Za-z0-9_\-]{20,}"), ("glimt-", r"[A-Za-z0-9_\-]{20,}"),
    ("GR1348941", r"[A-Za-z0-9_\-]{20,}"), ("doo_v1_", r"[a-f0-9]{64}"), ("dor_v1_", r"[a-f0-9]{64}"),
    ("LTAI", r"[A-Za-z0-9]{12,30}"), ("AKID", r"[A-Za-z0-9]{32}"), ("pat-na1-", r"[a-f0-9\-]{36}"),
    ("pat-eu1-", r"[a-f0-9\-]{36}"), ("CFPAT-", r"[A-Za-z0-9_\-]{40,}"), ("lsv2_pt_", r"[A-Za-z0-9_]{30,}"),
    ("lsv2_sk_", r"[A-Za-z0-9_]{30,}"), ("sntryu_", r"[a-f0-9]{64}"), ("NRII-", r"[A-Za-z0-9_\-]{30,}"),
    ("AKCp", r"[A-Za-z0-9]{60,}"), ("rubygems_", r"[a-f0-9]{48}"), ("oy2", r"[a-z0-9]{43}"),
    ("pul-", r"[a-f0-9]{40}"), ("sl.", r"[A-Za-z0-9_\-]{120,}"), ("1//0", r"[A-Za-z0-9_\-]{40,}"),
    ("lin_oauth_", r"[a-f0-9]{64}"), ("sess-", r"[A-Za-z0-9]{40}"), ("sb_secret_", r"[A-Za-z0-9_\-]{20,}"),
    ("re_", r"(?=[A-Za-z0-9_]*\d)[A-Za-z0-9_]{30,}"), ("napi_", r"[a-z0-9]{64}"), ("shippo_live_", r"[a-f0-9]{40}"),
    ("shippo_test_", r"[a-f0-9]{40}"), ("access_token$production$", r"[a-z0-9$]{40,}"), ("ATBB", r"[A-Za-z0-9]{32,}"),
    ("rnd_", r"[A-Za-z0-9]{32}"), ("squ_", r"[a-f0-9]{40}"), ("sqp_", r"[a-f0-9]{40}"), ("sqa_", r"[a-f0-9]{40}"),
    ("CCIPAT_", r"[A-Za-z0-9_]{40,}"), ("bkua_", r"[a-f0-9]{40}"), ("pnu_", r"[A-Za-z0-9]{36}"),
    ("access-production-", r"[a-f0-9\-]{36}"), ("access-sandbox-", r"[a-f0-9\-]{36}"), ("sk_", r"[a-f0-9]{48}"),
    ("APA91b", r"[A-Za-z0-9_\-]{100,}"), ("oauth:", r"[a-z0-9]{30}"), ("ek_live_", r"[A-Za-z0-9]{40,}"),
    # webhook addresses: whoever holds one may post as the integration
    ("discord.com/api/webhooks/", r"\d{5,}/[A-Za-z0-9_\-]{20,}"),
    ("discordapp.com/api/webhooks/", r"\d{5,}/[A-Za-z0-9_\-]{20,}"),
    ("webhook.office.com/webhookb2/", r"[A-Za-z0-9@/_\-]{30,}"),
    ("hooks.zapier.com/hooks/catch/", r"\d+/[A-Za-z0-9]{4,}"),
    ("hooks.slack.com/workflows/", r"[A-Za-z0-9/_]{20,}"), ("hooks.slack.com/triggers/", r"[A-Za-z0-9/_]{20,}"),
    ("outlook.office.com/webhook/", r"[A-Za-z0-9@/_\-]{30,}"), ("maker.ifttt.com/trigger/", r"[^\s]{10,}"),
    ("api.telegram.org/bot", r"\d{8,10}:[A-Za-z0-9_\-]{30,}"),
]
_KEY_RE = re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(re.escape(p) + rest for p, rest in _PREFIXED_KEYS)
                     + r")[A-Za-z0-9_\-+/=.~]*")
# words of a page's address after "sk-": a product (SK-II, SK hynix), not a key ("/products/sk-ii-facial-essence-230ml")
_SLUG_PART = r"(?:[a-z]{1,15}\d{0,4}|\d{1,6}[a-z]{0,3})"
_SLUG = re.compile(_SLUG_PART + r"(?:[-_]" + _SLUG_PART + r")+")


_VENDOR_SK = ("sk-ant-", "sk-proj-", "sk-svcacct-", "sk-admin-", "sk-or-")  # always keys


def _prefixed_key(m: re.Match[str]) -> str:
    key = m.group(0)
    if not key.startswith("sk-") or key.startswith(_VENDOR_SK) or not _SLUG.fullmatch(key, 3):
        return SECRET
    words = sum(len(re.sub(r"\d", "", part)) >= 2 for part in re.split(r"[-_]", key[3:]))
    return key if words >= 2 else SECRET  # lower-case words and small numbers joined by hyphens: a slug


# A password's hash (bcrypt, crypt's MD5/SHA-256/SHA-512, yescrypt, Argon2, Django's PBKDF2): cracked offline, it
# gives the password back
_PASSWORD_HASH = re.compile(
    r"\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}"
    r"|\$[156]\$(?:rounds=\d+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{22,}"
    r"|\$y\$[./A-Za-z0-9]+\$[./A-Za-z0-9]+\$[./A-Za-z0-9]{43}"
    r"|\$argon2(?:id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+"
    r"|(?<![A-Za-z0-9])pbkdf2_sha\d+\$\d+\$[^$\s\"']+\$[A-Za-z0-9+/=]{20,}")
# A wallet's recovery phrase after its name: 12 to 24 short lower-case words, numbered or not, over lines too
_MNEMONIC = re.compile(
    r"(?i:\b(?:seed(?:[ _-]?(?:phrase|words))?|mnemonic(?:[ _-]?phrase)?|(?:secret[ _-]?)?recovery[ _-]?(?:phrase|words)"
    r"|secret[ _-]?phrase|backup[ _-]?(?:phrase|words)|wallet[ _-]?words)\b)"
    r"[^\w\n]{0,4}(?:\s+(?:is|was|are|were)\b)?[^\w\n]{0,4}\s*"
    r"(?P<val>(?:(?:\d{1,2}[.):]\s*)?[a-z]{3,8}[\s,;]+){11,23}(?:\d{1,2}[.):]\s*)?[a-z]{3,8})\b")


def _mnemonic(m: re.Match[str]) -> str:
    return m.group(0)[: m.start("val") - m.start()] + SECRET


# Telegram bot tokens start with digits; ":AA" is their hint
_TELEGRAM = re.compile(r"(?<![\w])\d{8,10}:AA[A-Za-z0-9_\-]{30,}")


HINTS = {
    "key": tuple(p for p, _ in _PREFIXED_KEYS),
    "telegram": (":AA",),
    "password_hash": ("$2a$", "$2b$", "$2x$", "$2y$", "$2$", "$1$", "$5$", "$6$", "$y$", "$argon2", "pbkdf2_sha"),
    "mnemonic": ("seed", "mnemonic", "recovery phrase", "recovery words", "recovery_phrase", "recovery-phrase",
                 "secret phrase", "secret_phrase", "backup phrase", "backup words", "wallet words"),
}


def redact_key_shapes(text: str, starts: Callable[[str, str], list[int] | None]) -> str:
    """`text` with every secret known by its shape replaced by [SECRET]; `starts(text, group)`: where a group's
    hints are in `text` as it is now (None: look everywhere; []: nowhere)."""
    if starts(text, "key") != []:
        text = substitute_at(text, _KEY_RE, _prefixed_key, starts(text, "key"))
    if starts(text, "telegram") != []:
        text = substitute_at(text, _TELEGRAM, lambda m: SECRET, starts(text, "telegram"), back=11)
    if starts(text, "password_hash") != []:
        text = substitute_at(text, _PASSWORD_HASH, lambda m: SECRET, starts(text, "password_hash"), back=8)
    if starts(text, "mnemonic") != []:
        text = substitute_at(text, _MNEMONIC, _mnemonic, starts(text, "mnemonic"), ahead=400)
    return text
