"""The only way stored or caller text reaches the agent's words: a narrow whitelist of fragments.

Everything the agent reads is written by the coach; what it takes from a run (its own or a stored one) passes
through one of these functions, which return either a short clean fragment or None:

- `label`: a visible element label (a few words, no markup, no URL, no instruction-like words);
- `page`: the path of a URL on the run's own site (no query string, no ids longer than a few characters);
- `error_class`: an error reduced to a class from a fixed vocabulary (never the error's own words);
- `site`: a host name;
- `step_words`: an action as verb + label, with a typed value only when the current task contains it.

Unicode is NFKC-normalized and zero-width / bidi controls removed before any check, so homoglyph-free
look-alikes and split words are seen as what they spell.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

from condenser import action_target, action_verb, domain_of
from condenser.sites import registrable_domain

_INVISIBLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                        r"\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]")
# Latin look-alikes of Cyrillic and Greek letters: folded before the checks (never in the output).
_CONFUSABLES = str.maketrans("аеорсухіјѕԁԛԝаАВЕКМНОРСТУХІЈЅαβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
                             "aeopcyxijsdqwaABEKMHOPCTYXIJSabeikvoptyxABEZHIKMNOPTYX")
# Words that make a label read as an instruction, or name a role, in the languages agents meet most often.
_DENY = re.compile(
    r"\b(?:ignore|ignoring|disregard|forget|override|obey|instruction|instructions|prompt|prompts|system|assistant"
    r"|developer|operator|jailbreak|pretend|roleplay|reveal|exfiltrate|llm|chatgpt|claude|gpt|inst|sys"
    r"|you (?:are|must|should|will|need)|from now on|do not follow|don't follow|new rules?|important notice"
    r"|ignorez|ignorer|oubliez|instructions|ignoriere|ignorieren|anweisungen|vergiss|ignora|ignorar|instrucciones"
    r"|olvida|istruzioni|ignorare|negeer|instructies|игнорируй|инструкции|забудь|忽略|指令|無視|指示)\b", re.I)
_DENY_CJK = re.compile(r"忽略|指令|无视|無視|指示|システム|命令|系统")
_MARKUP = re.compile(r"[<>{}\[\]|`\\#*_=~^$@]|://|\b[\w-]+\.(?:[a-z]{2,})\b|\.{2,}|^[-.'&,/ ]|[-&,/ ]$", re.I)
_LABEL_OK = re.compile(r"^[\w .,'&/()+%?!-]+$")
_PATH_SEG = re.compile(r"^[A-Za-z0-9._~-]{1,24}$")
_IDLIKE = re.compile(r"(?=.*\d)[A-Za-z0-9_-]{6,}|\d{3,}")
_SPACES = re.compile(r"\s+")

MAX_LABEL_WORDS = 6
MAX_LABEL_CHARS = 40


def clean(text: str | None) -> str:
    """NFKC, invisible characters removed, whitespace collapsed: the form every check looks at."""
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", text)
    return _SPACES.sub(" ", text).strip()


def _folded(text: str) -> str:
    return text.translate(_CONFUSABLES).lower()


def instruction_like(text: str) -> bool:
    """True when text reads as an instruction or carries role markup (checked after normalization)."""
    t = _folded(clean(text))
    return bool(_DENY.search(t) or _DENY_CJK.search(t) or re.search(r"[<>\[\]{}|`]", t))


def label(text: str | None) -> str | None:
    """A visible element label fit to quote to the agent, or None."""
    t = clean(text).strip(" .,:;'\"")
    if not t or len(t) > MAX_LABEL_CHARS or len(t.split()) > MAX_LABEL_WORDS:
        return None
    if not _LABEL_OK.match(t) or _MARKUP.search(t) or instruction_like(t):
        return None
    if not any(c.isalpha() for c in t) or (" " not in t and _IDLIKE.fullmatch(t)):
        return None
    if t != _folded(t) and t.translate(_CONFUSABLES) != t:  # mixed scripts that fold to Latin: a homoglyph trick
        return None
    return t


def site(domain: str | None) -> str | None:
    """A host name fit to show, or None."""
    d = clean(domain).lower()
    if not d or len(d) > 60 or not re.fullmatch(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+", d):
        return None
    return d


def same_site(url_or_domain: str | None, domain: str | None) -> bool:
    """True when both name the same registrable domain (a URL without a host is relative: same site)."""
    if not url_or_domain:
        return True
    host = domain_of(url_or_domain) if ("/" in url_or_domain or ":" in url_or_domain) else url_or_domain
    if host is None:
        return url_or_domain.lstrip().startswith("/")
    if not domain:
        return False
    return registrable_domain(host) == registrable_domain(domain)


def page(url: str | None, domain: str | None) -> str | None:
    """The path of `url` when it is on the run's own site, shortened: `/event/9`, `/checkout`; else None."""
    u = clean(url)
    if not u or not same_site(u, domain):
        return None
    try:
        path = urlsplit(u if "://" in u else "http://x" + (u if u.startswith("/") else "/" + u)).path
    except ValueError:
        return None
    segments = [s for s in path.split("/") if s]
    if not segments:
        return "the home page"
    if len(segments) > 3 or not all(_PATH_SEG.match(s) for s in segments):
        segments = [s for s in segments if _PATH_SEG.match(s)][:3]
        if not segments:
            return None
    segments = ["…" if _IDLIKE.fullmatch(seg) else seg for seg in segments]  # product/session ids say nothing
    text = "/" + "/".join(segments)
    return text if len(text) <= 48 and not instruction_like(text.replace("/", " ")) else None


# Error classes: the only words of an error text the agent ever reads (first match wins).
ERROR_CLASSES: list[tuple[str, re.Pattern[str]]] = [
    ("a captcha or bot check", re.compile(r"captcha|are you a robot|not a robot|bot detection|verify you are human"
                                          r"|unusual traffic|cloudflare", re.I)),
    ("a login requirement", re.compile(r"log ?in required|sign ?in required|please (?:log|sign) ?in|must be logged"
                                       r"|unauthori[sz]ed|\b401\b|session expired|authenticat", re.I)),
    ("access denied", re.compile(r"access denied|forbidden|\b403\b|permission denied|blocked", re.I)),
    ("another element covering the target", re.compile(
        r"intercepts pointer|obscured|another element would receive|not clickable at point|overlay|modal", re.I)),
    ("a disabled element", re.compile(r"\bdisabled\b|not enabled|read-?only", re.I)),
    ("an element that is not visible", re.compile(r"not visible|hidden|outside (?:of )?the viewport|zero size", re.I)),
    ("an element that no longer exists", re.compile(r"stale element|detached|not attached", re.I)),
    ("an element that was not found", re.compile(
        r"no (?:such )?element|not found in|could not find|unable to (?:find|locate)|no node|does not exist"
        r"|invalid (?:element|selector|index)|element (?:id|index)|index out of range|no element", re.I)),
    ("a page that was not found", re.compile(r"\b404\b|page not found|not found", re.I)),
    ("a server error", re.compile(r"\b5\d\d\b|internal server error|bad gateway|service unavailable", re.I)),
    ("a timeout", re.compile(r"timed? ?out|timeout|deadline exceeded", re.I)),
    ("a navigation error", re.compile(r"net::err|err_[a-z_]+|dns|connection (?:refused|reset)|page crashed"
                                      r"|target closed|navigation failed", re.I)),
    ("an invalid value", re.compile(r"invalid (?:value|input|date|format)|not a valid|required field|must be", re.I)),
]


def error_class(text: str | None) -> str | None:
    """The class of an error text ("an element that was not found", ...), `an error` when none fits."""
    t = _folded(clean(text))
    if not t:
        return None
    for name, pattern in ERROR_CLASSES:
        if pattern.search(t):
            return name
    return "an error"


_VERB_WORDS = {"click": "click", "type": "type", "search": "search for", "select": "select", "navigate": "go to",
               "press": "press", "hover": "hover over", "drag": "drag", "scroll": "scroll", "back": "go back",
               "forward": "go forward", "wait": "wait"}
_TYPED = re.compile(r"^\s*[A-Za-z_]+\s*(?:\[[^\]]*?,\s*(?P<a>.+?)\]|\(\s*['\"](?P<b>.+?)['\"]|:\s*(?P<c>.+?)\s*\[|"
                    r"\s+['\"](?P<d>.+?)['\"])", re.S)
_TYPED_KW = re.compile(r"text\s*=\s*['\"](?P<v>[^'\"]+)['\"]")
_FIELD_HINT = re.compile(r"\[(?:textbox|searchbox|combobox|input|select|listbox)\]\s*(?P<f>[^\[\]]{2,40})$", re.I)


def typed_value(action: str) -> str | None:
    """The value a type/search action entered, when the action string carries it."""
    m = _TYPED_KW.search(action)
    if m:
        return m.group("v").strip()
    m = _TYPED.match(action)
    if not m:
        return None
    value = next((g for g in m.groups() if g), None)
    return value.strip() if value else None


def value_in_task(value: str | None, task: str) -> str | None:
    """`value` when the current task contains it (case- and space-insensitive), else None."""
    v = clean(value)
    if not v or len(v) > 60:
        return None
    norm = lambda s: " ".join(_folded(s).split())  # noqa: E731 - a one-line local normalizer
    return v if norm(v) in norm(clean(task)) and label(v) else None


def action_label(action: str) -> str | None:
    """The visible label an action names, in its own case (`click('Buy')` -> `Buy`), or None."""
    target = action_target(action)
    if not target:
        return None
    flat = " ".join(re.sub(r"[\"'\[\]()]", " ", action).split())
    i = flat.lower().find(target)
    return label(flat[i:i + len(target)] if i >= 0 else target)


def _foreign(text: str, task: str, other_task: str | None) -> bool:
    """A label that is a parameter of the other run's task (a name, a date) and not of the current one."""
    if not other_task:
        return False
    low = " ".join(_folded(text).split())
    return low in " ".join(_folded(clean(other_task)).split()) and low not in " ".join(_folded(clean(task)).split())


def step_words(action: str, description: str | None, *, task: str, domain: str | None,
               url: str | None = None, other_task: str | None = None) -> str | None:
    """An action in words the agent may read (verb + visible label), or None when nothing safe is left.

    Never an element id, index or coordinate; a typed value only when the current task contains it; a
    navigation only within the run's own site; answers and stops are never suggested.
    """
    verb = action_verb(action)
    if verb in {"answer", "none", "other", "wait"}:
        return None
    if verb == "navigate":
        target = action_target(action)
        if not same_site(target or url, domain):
            return None
        where = page(target, domain) if target else None
        return f"go to {where} on {site(domain)}" if where and site(domain) else None
    if verb in {"scroll", "back", "forward"}:
        return _VERB_WORDS[verb]
    if verb in {"type", "search", "select"}:
        value = value_in_task(typed_value(action), task)
        field = _field_label(action, description)
        if verb == "select":
            if value:
                return f"select '{value}'" + (f" in '{field}'" if field else "")
            return f"choose the option your task asks for in '{field}'" if field else None
        if verb == "search":
            return f"search for '{value}'" if value else (f"search in the '{field}' box" if field else
                                                           "search with the words of your task")
        if value:
            return f"type '{value}'" + (f" into the '{field}' field" if field else "")
        return f"fill in the '{field}' field with the value your task gives" if field else None
    labeled = re.search(r"labeled '([^']{1,60})'", description or "")
    target = (label(labeled.group(1)) if labeled else None) or action_label(action) or _desc_label(description)
    if not target:
        return None
    if _foreign(target, task, other_task):
        return f"{_VERB_WORDS.get(verb, verb)} the entry that matches your task"
    return f"{_VERB_WORDS.get(verb, verb)} '{target}'"


def _field_label(action: str, description: str | None) -> str | None:
    m = _FIELD_HINT.search(action.strip())
    if m:
        return label(m.group("f"))
    return _desc_label(description, typed=True)


def _desc_label(description: str | None, *, typed: bool = False) -> str | None:
    """The label inside a precomputed step description (`click the element labeled 'X'`, `click gift cards`)."""
    if not description:
        return None
    m = re.search(r"labeled '([^']{1,60})'", description)
    if m:
        return label(m.group(1))
    if typed:
        return None
    verb, _, rest = description.partition(" ")
    return label(rest) if rest and not rest.startswith("(") else None


_INTERNALS = re.compile(
    r"\b(?:risk|similarity|similar past runs?|weight|feature|score|confidence|probability|episode \d|"
    r"this agent|long,? constrained task|signals?)\b|\(\d\.\d\d\)|\b0\.\d{2}\b", re.I)
_FOREIGN_IDS = re.compile(
    r"\b(?:index|bid|idx|element_id|node)\s*[=:]\s*\d+|\[\s*\d+\s*\]|\(\s*\d+\s*,\s*\d+\s*\)|#[A-Za-z][\w-]*\d[\w-]*"
    r"|\b(?:click|type|select|hover)\s*\(\s*['\"]?\d+|\bclick\s+\d+\b|\bat \(\d", re.I)


def shows_internals(text: str) -> bool:
    """True when agent-facing text shows the model's internals (scores, weights, feature words, identity)."""
    return bool(_INTERNALS.search(text or ""))


def carries_ids(text: str) -> bool:
    """True when text carries element ids, indices, bids, coordinates or CSS ids."""
    return bool(_FOREIGN_IDS.search(text or ""))


def hosts_in(text: str) -> set[str]:
    """Host names mentioned in text."""
    return {m.lower() for m in re.findall(r"\b(?:[a-z0-9-]+\.)+(?:com|org|net|gov|edu|io|co|uk|de|fr|example|info"
                                          r"|biz|us|ca|au|jp|app|dev|ai|xyz|ru|cn)\b", clean(text), re.I)}
