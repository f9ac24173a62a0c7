"""Redaction of secrets (typed passwords, tokens and API keys, card numbers, e-mail addresses)."""

from __future__ import annotations

import re

from condenser.models import Step, Trajectory

EMAIL = "[EMAIL]"
CARD = "[CARD]"
SECRET = "[SECRET]"

_EMAIL_RE = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
_CARD_RE = re.compile(r"(?<![\w-])(?:\d[ -]?){12,18}\d(?![\w-])")
_BEARER_RE = re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9\-._~+/]{8,}=*")
_KEY_RE = re.compile(
    r"\b(?:sk-[A-Za-z0-9_\-]{16,}|sk_(?:live|test)_[A-Za-z0-9]{10,}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|xox[abposr]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{30,}|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})"
)
_ASSIGN_RE = re.compile(
    r"(?i)\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|password|passwd|pwd|token)"
    r"\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s&\"',;]+)"
)
# Cheap necessary conditions, so most texts (long observations) skip the costly patterns: every key, bearer
# token or assignment above contains one of these once case-folded; a card number has at least 13 digits.
_SECRET_HINTS = ("key", "token", "secret", "pass", "pwd", "bearer", "basic", "sk-", "sk_", "ghp_", "gho_", "ghu_",
                 "ghs_", "ghr_", "github_pat_", "akia", "xox", "aiza", "eyj")
_DIGIT = re.compile(r"\d")
_PASSWORD_WORDS = re.compile(r"(?i)pass(?:word|wd|code|phrase)|\bpin\b|\bcvv\b|\bcvc\b|security code")
# Typing actions in the formats we see: Type "x", TYPE: x [textbox] label, fill('sel', 'x'), type[id][x].
_TYPE_PATTERNS = [
    re.compile(r"^(?P<pre>\s*type\s*\"?)(?P<val>.*?)(?P<post>\"?\s*)$", re.I | re.S),
    re.compile(r"^(?P<pre>\s*type:\s*)(?P<val>.*?)(?P<post>\s*\[[^\]]*\].*)$", re.I | re.S),
    re.compile(r"^(?P<pre>\s*(?:fill|type|input_text|send_keys)\s*\(\s*(?P<tgt>[^,]*),\s*[\"'])(?P<val>.*?)(?P<post>[\"']\s*\).*)$", re.I | re.S),
    re.compile(r"^(?P<pre>\s*(?:fill_form|type|fill)\s*\[(?P<tgt>[^\]]*)\]\s*\[)(?P<val>.*?)(?P<post>\].*)$", re.I | re.S),
]


def _luhn_ok(digits: str) -> bool:
    total, parity = 0, len(digits) % 2
    for i, ch in enumerate(digits):
        d = int(ch)
        if i % 2 == parity:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group(0))
    return CARD if 13 <= len(digits) <= 19 and _luhn_ok(digits) else match.group(0)


def _digits(text: str) -> int:
    """How many digits `text` holds (\\d, as the card pattern counts them; str.count is faster on ASCII)."""
    return sum(map(text.count, "0123456789")) if text.isascii() else len(_DIGIT.findall(text))


def redact_text(text: str, extra_secrets: set[str] | frozenset[str] = frozenset()) -> str:
    """Replace e-mails, card numbers, tokens, keys and the given literal secrets in `text`."""
    for secret in sorted(extra_secrets, key=len, reverse=True):
        text = text.replace(secret, SECRET)
    if "@" in text:
        text = _EMAIL_RE.sub(EMAIL, text)
    folded = text.casefold()
    if any(hint in folded for hint in _SECRET_HINTS):
        text = _KEY_RE.sub(SECRET, text)
        text = _BEARER_RE.sub(lambda m: f"{m.group(1)} {SECRET}", text)
        text = _ASSIGN_RE.sub(lambda m: m.group(1) + SECRET, text)
    if _digits(text) >= 13:
        text = _CARD_RE.sub(_card, text)
    return text


def _typed_password(step: Step) -> tuple[str, str] | None:
    """(value, action with the value masked) when the step types into a password-like field."""
    for pattern in _TYPE_PATTERNS:
        m = pattern.match(step.action)
        if not m or not m.group("val").strip():
            continue
        target = (m.groupdict().get("tgt") or "") + m.group("post")
        context = " ".join(filter(None, [target, step.thought or "", step.observation or ""]))
        if _PASSWORD_WORDS.search(target) or (
            _PASSWORD_WORDS.search(context) and not _PASSWORD_WORDS.search(m.group("val"))
        ):
            value = m.group("val")
            return value, m.group("pre") + SECRET + m.group("post")
    return None


def _typed_secrets(trajectory: Trajectory) -> tuple[set[str], dict[int, str]]:
    """Values typed into password-like fields, and the actions with those values masked (by step)."""
    secrets: set[str] = set()
    masked_actions: dict[int, str] = {}
    for i, step in enumerate(trajectory.steps):
        found = _typed_password(step)
        if found and len(found[0]) >= 3:
            secrets.add(found[0])
            masked_actions[i] = found[1]
    return secrets, masked_actions


def redact_task_and_actions(trajectory: Trajectory) -> tuple[str, list[str]]:
    """The task and actions of a run with every secret replaced, as `redact_trajectory` would leave them:
    what a query embeds, without redacting (or copying) observations and thoughts."""
    secrets, masked_actions = _typed_secrets(trajectory)
    actions = [redact_text(masked_actions.get(i, s.action), secrets) for i, s in enumerate(trajectory.steps)]
    return redact_text(trajectory.task, secrets), actions


def redact_trajectory(trajectory: Trajectory) -> Trajectory:
    """A copy of `trajectory` with every secret replaced, in every text field."""
    secrets, masked_actions = _typed_secrets(trajectory)

    def clean(value: str | None) -> str | None:
        return None if value is None else redact_text(value, secrets)

    steps = []
    for i, step in enumerate(trajectory.steps):
        update = {
            "url": clean(step.url),
            "observation": clean(step.observation),
            "thought": clean(step.thought),
            "action": redact_text(masked_actions.get(i, step.action), secrets),
            "error": clean(step.error),
        }
        # most steps hold no secret: keep the (immutable) step itself rather than copying it
        unchanged = all(value == getattr(step, name) for name, value in update.items())
        steps.append(step if unchanged else step.model_copy(update=update))
    return trajectory.model_copy(
        update={
            "task": redact_text(trajectory.task, secrets),
            "start_url": clean(trajectory.start_url),
            "steps": steps,
            "tags": {k: redact_text(v, secrets) for k, v in trajectory.tags.items()},
        }
    )
