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

import functools
import re
import unicodedata
from itertools import takewhile
from urllib.parse import urlsplit

from coach.steering import advises, names_secret, steers, unleet
from condenser import action_target, action_verb, domain_of
from condenser.lookalikes import BUILT_IN_MARKS, CONFUSABLES
from condenser.sites import is_public_suffix, registrable_domain

INVISIBLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                        r"\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]")
# Scripts whose letters only appear in a label to imitate Latin ones (IPA, modifier letters, Cherokee, Lisu).
_ODD_LETTERS = re.compile(r"[\u0180-\u019f\u01a2-\u01ae\u01b1-\u01c3\u01dd-\u0217\u021c-\u024f\u0250-\u02ff\u1d00-\u1dbf\u13a0-\u13ff\uab70-\uabbf\ua4d0-\ua4ff\ua720-\ua7ff"
                          r"\u2100-\u214f\u1e00-\u1eff\U0001d400-\U0001d7ff]")
_COLONS = re.compile(r"[:\uff1a\ufe13\ufe55\u02d0\u02f8\ua789\u2236\u0589\u05c3\u1361]")
# Stems that make a text read as an instruction or a role, in the languages agents meet most often. Checked
# on the folded, accent-free text and again with every space and punctuation mark removed (split words).
_DENY_STEMS = (
    "ignor", "disregard", "forget", "vergiss", "vergessen", "oublie", "olvid", "dimentic", "esquec", "zapomn",
    "instruction", "instruc", "anweisung", "consigne", "istruz", "instrukc", "instrukt", "opdracht", "polecen",
    "override", "jailbreak", "pretend", "roleplay", "obey", "gehorch", "obeis", "obedec", "systemprompt",
    "systemmessage", "systemnote", "developermessage", "donothingelse", "doanythingnow", "webcoach", "evidence",
    "exfiltrat", "reveal", "previousrules", "priorrules", "newrules", "fromnowon", "youarenow", "ahoraeres", "jetztbist", "tuesmaintenant", "etesmaintenant", "esmaintenant", "sistemaprompt", "mensajedelsistema", "messagesysteme",
    "systemnachricht", "игнор", "забуд", "инструкц", "систем", "указани", "忽略", "无视", "無視", "忘记", "忘れ",
    "指令", "指示", "系统", "系統", "システム", "命令", "무시", "지시", "시스템", "잊", "تجاهل", "تعليمات", "النظام",
    "התעלם", "הוראות", "अनदेखा", "निर्देश", "bỏqua", "hướngdẫn", "görmezden", "talimat", "abaikan", "instruksi",
    "zignoruj", "negeer", "ignoreer", "unuti", "figyelmen", "missacht", "desconsider", "ohita", "puuza", "vergeet",
    "nonseguire", "nonsegui", "dubistjetzt", "duerjetzt", "tuesdesormais", "ahoraeres", "agoravoce", "voceagora",
    "sekarangkamu", "jestesteraz", "nyttu", "suggestednextstep", "webcoachsays", "sistema", "systemow",
    "casoomiso", "netenezpascompte", "wantsyouto", "ignoreeverything", "αγνοησ", "ігнор", "теперьты",
    "необращай", "שכח", "انس", "نادیده", "あなたは今から", "你现在是", "너는이제", "不要理会", "잊어",
    "imstart", "imend", "endoftext", "startofturn", "endofturn", "lupakan", "aturansebelumnya", "yenikurallar",
    "从现在开始", "听我的", "聽我的", "القواعد",
    # "ignore" and "instructions" in more languages (Croatian, Serbian, Slovenian, Basque, Swahili, Estonian,
    # Icelandic, Catalan, Welsh)
    "zanemar", "prethodn", "uputstv", "prezri", "navodil", "ahaztu", "ezikusi", "argibide", "maagizo", "maelekezo",
    "sahau", "juhis", "unusta", "hunsa", "gleymdu", "leiðbeining", "oblida", "cyfarwydd", "anwybydd", "anghofi",
)
_DENY_WORDS = re.compile(
    r"\b(?:system|assistant|developer|operator|llm|gpt|claude|chatgpt|inst|sys|prompt|prompts|act as"
    r"|you are|you must|you should|you will|you need|do not|don't)\b", re.I)
_HOSTLIKE = re.compile(r"\b[\w-]+\s*(?:\.|\(dot\)|\[dot\]|\[\.\]|\bdot\b)\s*(?:[a-z]{2,24})\b|\b\d{1,3}(?:\.\d{1,3}){3}\b"
                       r"|xn--|javascript|data:|file:|://|//", re.I)
_IDWORDS = re.compile(r"\b(?:ref|bid|idx|index|node|element|elem|testid|data-testid|nth|xpath|css|selector|id|coords?"
                      r"|coordinates?|pos|position|offset|px|pixels?)\b"
                      r"|(?-i:\b[a-z]\d{2,}\b)|-btn\b|^\.|\bx\s*\d{2,}\s*y\s*\d{2,}\b|\d+\s*,\s*\d+|\b\d{5,}\b", re.I)
_MARKUP = re.compile(r"[<>{}\[\]|`\\#*_=~^$@]|\.{2,}|^[-.'&,/ ]|[-&,/ ]$", re.I)
_LABEL_OK = re.compile(r"^[\w .,'&/()+%?!-]+$")
_PATH_SEG = re.compile(r"^[A-Za-z0-9._~-]{1,24}$")
_IDLIKE = re.compile(r"(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{6,}|\d{3,}")  # fullmatch: a token with a digit in it
_SPACES = re.compile(r"\s+")


MAX_LABEL_WORDS = 5
MAX_LABEL_CHARS = 40


def clean(text: str | None) -> str:
    """NFKC, invisible characters removed, whitespace collapsed: the form every check looks at."""
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", text)
    text = INVISIBLE.sub("", text)
    return _SPACES.sub(" ", text).strip()


def _folded(text: str) -> str:
    """Look-alikes folded to Latin, accents dropped (those built into a letter too: ø, ł, đ, œ), lower case: what
    a text spells."""
    text = text.translate(CONFUSABLES).translate(BUILT_IN_MARKS)
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return text.lower()


# the stems as the checked text is folded (Hangul decomposed, Cyrillic and Greek look-alikes made Latin): written
# as a reader knows them above, compared only in this form ("무시" and "игнор" never matched before 2026-12-04)
_DENY_FOLDED = tuple(dict.fromkeys(_folded(stem) for stem in _DENY_STEMS))
# Everyday labels that hold a stem: a "forgot password" link in the languages of the stems, and instructions that
# come with a product or an order. Taken out before the stems are looked for; anything else beside them still counts.
_BENIGN = re.compile(_folded(
    r"forgot(?:ten)? (?:your |my )?password|passwort vergessen|kennwort vergessen|mot de passe oublié|"
    r"contraseña olvidada|olvidaste (?:tu )?contraseña|olvidé (?:mi )?contraseña|password dimenticata|"
    r"esqueceu (?:a |sua )?senha|esqueci (?:a |minha )?senha|zapomniałeś hasła|nie pamiętasz hasła|"
    r"忘记密码|忘記密碼|パスワードを忘れ|שכחת (?:את )?(?:ה)?סיסמה|"
    r"(?:delivery|care|washing|assembly|cooking|installation|shipping|special|dosage|payment) instructions?|"
    r"instruksi pembayaran|gebrauchsanweisung|bedienungsanleitung|"
    r"don't have an account|do not have an account|do not sell (?:or share )?my|don't miss|do not track|"
    # everyday labels and product names that hold a role word or a stem
    r"you are here|do not disturb|do not use|operating systems?|pretend play|tour operators?|"
    r"(?:sales|shop|store|personal|teaching|medical|dental|legal|office|executive|research|administrative|shopping"
    r"|virtual|voice|google|kitchen|parking|park) assistants?|assistant (?:manager|director|professor|editor|coach"
    r"|principal|store manager)|(?:sound|audio|home theater|stereo|file|solar|security|alarm|heating|sprinkler|filing"
    r"|storage|organi[sz]ation|navigation|exhaust|braking|cooling|water|irrigation|mesh|wifi|wi fi|speaker|camera"
    r"|lighting|rail|shelving|closet) systems?"))


def _spells_instruction(text: str) -> bool:
    folded = _BENIGN.sub(" ", re.sub(r"[-_]+", " ", _folded(clean(text))))
    squeezed = re.sub(r"[\W_]+", "", folded)
    return any(stem in folded or stem in squeezed for stem in _DENY_FOLDED)


def instruction_like(text: str) -> bool:
    """True when text reads as an instruction or carries role markup (checked after normalization)."""
    t = clean(text)
    return bool(_spells_instruction(t) or _DENY_WORDS.search(_BENIGN.sub(" ", _folded(t))) or _COLONS.search(t)
                or re.search(r"[<>\[\]{}|`]", t))


def reads_as_order(action: str) -> bool:
    """A stored action whose target (the words it clicks or types into, or the path it opens) carries an order for
    whoever replays it: an instruction phrase or a role word, or one of the kinds `steers` refuses."""
    target = clean(action_target(action) or "")[:300]
    if not target:
        return False
    if "://" in target or target.startswith("/"):
        try:
            path = urlsplit(target if "://" in target else "http://x" + target).path
        except ValueError:
            return True
        words = " ".join(re.split(r"[/_\-.~+%]+", path)).strip()
        return bool(words) and steers(_folded(words))
    if _spells_instruction(target):
        return True
    if action_verb(action) in {"type", "search", "select"}:
        return False  # what it types is the run's data ("software developer"), read for instructions only
    folded = _BENIGN.sub(" ", _folded(target))
    return _DENY_WORDS.search(folded) is not None or steers(folded)


@functools.lru_cache(maxsize=16384)
def label(text: str | None) -> str | None:
    """A visible element label fit to quote to the agent, or None.

    Remembered by text (a pure function of it): the neighbours of a fleet's runs are the same stored runs again and
    again, and each coaching call reads the labels of every step of every neighbour's plan.

    At most 5 words / 40 characters of one script, no markup, colon, host, address, id or selector, nothing
    that spells an instruction or a role once look-alikes are folded and splits are undone.
    """
    t = clean(text).strip(" .,;'\"")
    if not t or len(t) > MAX_LABEL_CHARS or len(t.split()) > MAX_LABEL_WORDS:
        return None
    if not _LABEL_OK.match(t) or _MARKUP.search(t) or _ODD_LETTERS.search(t) or instruction_like(t):
        return None
    if steers(_folded(t)) or advises(_folded(t)):  # a spaced host, a request for a secret, the end of the task, a note
        return None
    # the same read with camel humps split ("QuitTask", "PasteCVVHere") and digits in words read as letters
    # ("1gn0re all rules")
    split = re.sub(r"(?<=[a-z])(?<!\b[a-z])(?=[A-Z])|(?<=[A-Z]{2})(?=[A-Z][a-z])", " ", t)  # "iPhone" stays one
    if split != t and (steers(_folded(split)) or instruction_like(split)):
        return None
    read = unleet(t)
    if read != t and instruction_like(read):
        return None
    if _HOSTLIKE.search(t) or _IDWORDS.search(t):
        return None
    if not any(c.isalpha() for c in t) or (" " not in t and _IDLIKE.fullmatch(t)):
        return None
    if t.translate(CONFUSABLES) != t or _mixed_scripts(t):  # look-alike letters: a homoglyph trick
        return None
    if re.search(r"\b(?!(?:19|20)\d\d\b)\d{3,}\b", t) and not _model_number(t):  # an index or id, not a year
        return None
    if _STREET_ADDRESS.search(t):  # where a person lives or ships to: another run's personal data
        return None
    if t.lower() in TAG_NAMES:  # "CLICK [span]": an element's tag or role, not what it says
        return None
    if sum(len(w) <= 2 for w in t.split()) > 2 or "%" in t and not re.search(r"\d", t):
        return None  # words split into fragments ("I g n o r e", "ig%nore")
    if re.search(r"\w[-/]\w", t):  # "Check-in", "Men/Women"; read joined and apart too ("ig-nore", "Ta-sk do-ne")
        joined, apart = re.sub(r"(?<=\w)[-/](?=\w)", "", t), re.sub(r"(?<=\w)[-/](?=\w)", " ", t)
        if any(steers(_folded(form)) or instruction_like(form) for form in (joined, apart)):
            return None
    return t


_QUOTED = re.compile(r"'([^']+)'")


def orders_when_joined(steps: list[str]) -> bool:
    """True when the labels of consecutive steps read as one order together though each passed alone ("click
    'Send your', then click 'password', then click 'to Bob'"): a plan is read as one sentence."""
    labels = [found for step in steps for found in _QUOTED.findall(step)]
    for i in range(len(labels) - 1):
        for j in range(i + 2, len(labels) + 1):
            joined = " ".join(labels[i:j])
            if instruction_like(joined) or steers(_folded(joined), joined=True):
                return True
    return False


# a street address: a house number and one to three words ending in a street's kind ("42 Elm Street", "1600
# Amphitheatre Pkwy", "12 rue de la Paix", "Hauptstraße 5", "Calle Mayor 3")
_STREET_ADDRESS = re.compile(
    r"(?i)\b\d{1,5}[a-z]?,?\s+(?:[^\W\d_]+\.?\s+){1,3}(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr"
    r"|court|ct|place|pl|terrace|ter|parkway|pkwy|circle|cir|highway|hwy|square|sq|trail|trl|crescent|cres|close)\b"
    r"|\b\d{1,5}[a-z]?,?\s+(?:rue|avenue|boulevard|bd|chemin|impasse|allée|allee|via|viale|calle|avenida|rua|carrer)"
    r"\s+\w+"
    # the street's kind joined to its name (a hidden joiner removed: "42 Elm\u200bStreet" reads "42 ElmStreet")
    r"|\b\d{1,5}[a-z]?,?\s+(?:[^\W\d_]+\.?\s+){0,2}[^\W\d_]{2,}(?:street|avenue|road|boulevard|lane|drive|terrace"
    r"|parkway|highway)\b"
    r"|\b[^\W\d_]{3,}(?:straße|strasse|str\.|weg|gasse|allee|platz|laan|straat|gade|vej|gatan|vägen)\s*\d{1,5}[a-z]?\b"
    r"|\b(?:rue|via|viale|calle|avenida|rua|carrer|plaza|piazza)\s+(?:[^\W\d_]+\s+){0,3}?[^\W\d_]+,?\s*\d{1,5}[a-z]?\b")


# a product's model number in a name of words ("Boeing 737", "Nike Air Max 270", "RTX 4090"): 3-4 digits beside a
# word of letters, never a bare number or a long one (an id)
def _model_number(text: str) -> bool:
    words = text.split()
    numbers = re.findall(r"\d+", text)
    if re.search(r"(?i)\b(?:row|item|code|room|gate|ext|no|number|line|page|col|column|cell|pin|key|index)\b", text):
        return False  # "Row 1523", "Gate code 4821": an index or a code, not a model
    return (len(words) >= 2 and len(numbers) == 1 and len(numbers[0]) <= 4
            and any(len(w) >= 3 and w.isalpha() for w in words))


def scripts_of(text: str) -> set[str]:
    """The writing systems of the letters in `text` (LATIN, CYRILLIC, CJK, ARABIC, ...)."""
    scripts = set()
    for c in text:
        if c.isalpha():
            name = unicodedata.name(c, "?").split(" ")[0]
            scripts.add("CJK" if name in {"CJK", "HIRAGANA", "KATAKANA", "HANGUL"} else name)
    return scripts


TAG_NAMES = frozenset(
    "a abbr article aside b button div em footer form h1 h2 h3 h4 h5 h6 header i img input label li link main nav "
    "ol option p path section select span strong svg table tbody td textarea th tr ul use combobox textbox searchbox "
    "listbox checkbox radio menuitem tab gridcell cell row heading generic group region image icon element item "
    "disclosuretriangle statictext spinbutton slider switch dialog".split())


def _mixed_scripts(text: str) -> bool:
    return len(scripts_of(text)) > 1


def task_label(text: str | None, task: str) -> str | None:
    """`label(text)`, and only when it is written in a script of the task: a label in another script than the
    task's own language is not what the agent reads on its page, so it is described, not quoted."""
    found = label(text)
    if found is None:
        return None
    own = scripts_of(clean(task)) or {"LATIN"}
    return found if scripts_of(found) <= own else None


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


def _bad_segment(segment: str) -> bool:
    """A path segment that hides a host, an address or an instruction (`evil.com`, `evil.to`, `evil-dot-ai`,
    `10.0.0.1`, `ignore_rules`)."""
    words = " ".join(re.split(r"[_\-.~+%]+|(?<=[a-z])(?=[A-Z])", segment))
    return bool(disguised_hosts(segment) or _host_segment(segment) or re.fullmatch(r"[\d.]+", segment) and segment.count(".") >= 2
                or segment.lower().startswith("xn--") or spells_instruction(words) or instruction_like(words)
                or len(segment) <= 64 and (steers(_folded(words)) or advises(_folded(words))))  # a longer one is never shown


_SPELLED_DOT = re.compile(r"(?i)[a-z0-9][-_]dot[-_][a-z]{2,}")


def _host_segment(segment: str) -> bool:
    """`evil.to`, `evil.lol`: a name ending in a public suffix (any TLD, from the public-suffix list), or a dot
    spelled out (`evil-dot-ai`). A page's own file name (`index.html`, `store-locator.shtml`) is none."""
    if _SPELLED_DOT.search(segment):
        return True
    name, dot, tld = segment.lower().rpartition(".")
    return bool(dot and name and re.fullmatch(r"[a-z]{2,24}", tld) and tld not in _FILE_TYPES and is_public_suffix(tld))


_FILE_TYPES = frozenset("html htm shtml xhtml php asp aspx jsp jspx cfm cgi pl json xml rss pdf jpg jpeg png gif svg "
                        "webp css js txt csv doc docx xls xlsx ppt pptx mp3 mp4 webm".split())


# hosts that serve one function of a site (sign-in, accounts, help, payment): their root is not the site's home
_SERVICE_HOST = re.compile(r"(?:log-?in|sign-?in|auth|sso|id|accounts?|my-?account|secure\d*|help|support|faq"
                           r"|checkout|pay(?:ments?)?|billing|passport)", re.I)


def _other_host(url: str, domain: str | None) -> str | None:
    """The host of `url` when it is a service host of the run's site other than the task's own (`login.yahoo.com`
    for a task on sports.yahoo.com), fit to show: its own labels pass the same checks as a path segment."""
    host = (domain_of(url) or "").lower().removeprefix("www.")
    own = ((domain_of(domain) if domain and "/" in domain else clean(domain)) or "").lower().removeprefix("www.")
    base = registrable_domain(host) if host else ""
    if not host or not base or host in {own, base}:
        return None
    labels = host[: -len(base)].rstrip(".").split(".")
    if not _SERVICE_HOST.fullmatch(labels[0]):
        return None  # `us.megabus.com`, `new.mta.info`, `m.shop.com`: the site's own home page under another name
    if len(labels) > 2 or any(len(x) > 20 or _bad_segment(x) for x in labels):
        return None
    return site(host)


def off_site(url: str | None, domain: str | None) -> str | None:
    """The site (registrable domain) of `url` when it is not the task's own, fit to show; else None."""
    if not url or re.match(r"\s*(?!https?:)[a-z][a-z0-9+.-]*:(?!\d)", url, re.I):
        return None  # a mailto:, javascript: or data: address, or a user@host one, names no site the agent is on
    host = domain_of(url)
    if not host or not domain or same_site(host, domain) or re.fullmatch(r"[\d.]+|.*:.*", host):
        return None  # an IP address names no site
    name = site(registrable_domain(host))
    return name if name and not any(_bad_segment(x) for x in name.split(".")[:-1]) else None


def page(url: str | None, domain: str | None, depth: int = 3) -> str | None:
    """The path of `url` when it is on the run's own site, shortened: `/event/9`, `/checkout`; else None."""
    u = clean(url)
    if not u or not same_site(u, domain):
        return None
    try:
        path = urlsplit(u if "://" in u else "http://x" + (u if u.startswith("/") else "/" + u)).path
    except ValueError:
        return None
    if "//" in path.strip("/"):
        return None
    segments = [s for s in path.split("/") if s]
    if any(_bad_segment(seg) for seg in segments):
        return None
    if len(path) <= 96 and steers(_folded(" ".join(re.split(r"[/_\-.~+%]+", path)))):
        return None  # an order split over segments: /task/complete, /stop/now
    if not segments:
        return _other_host(u, domain) or "the home page"
    shown = list(takewhile(_PATH_SEG.match, segments[:min(depth, 3)]))  # the path's own beginning, never pieces
    while shown and len(shown[-1]) <= 2 and shown[-1].isalpha():
        shown.pop()  # "/c/tents/f": a one- or two-letter tail names nothing the agent could recognise
    if not shown:
        return None
    cut = len(shown) < len(segments)
    shown = ["…" if _IDLIKE.fullmatch(seg) else seg for seg in shown]  # product/session ids say nothing
    if all(seg == "…" for seg in shown):
        return None  # "/…" names no page the agent could recognise
    text = "/" + "/".join(shown) + ("/…" if cut and shown[-1] != "…" else "")  # deeper than shown: said so
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
        r"|invalid (?:element|selector|index)|element (?:id|index)|index out of range|no element|nosuchelement"
        r"|\b(?:element|selector|node|button|link|locator|target)s?(?: ?\[[^\]]{0,20}\]| \S{1,40})? (?:was |were |is )?"
        r"not found", re.I)),
    ("a page that was not found", re.compile(r"\b404\b|page not found|not found", re.I)),
    ("a server error", re.compile(r"\b5\d\d\b|internal server error|bad gateway|service unavailable", re.I)),
    ("a timeout", re.compile(r"timed? ?out|timeout|deadline exceeded", re.I)),
    ("a navigation error", re.compile(r"net::err|err_[a-z_]+|dns|connection (?:refused|reset)|page crashed"
                                      r"|target closed|navigation failed", re.I)),
    ("an invalid value", re.compile(r"invalid (?:value|input|date|format)|not a valid|required field|must be", re.I)),
]


def error_class(text: str | None) -> str | None:
    """The class of an error text ("an element that was not found", ...), `an error` when none fits."""
    t = _folded(clean((text or "")[:2000]))  # its head names the error; a page can make the rest megabytes long
    if not t:
        return None
    for name, pattern in ERROR_CLASSES:
        if pattern.search(t):
            return name
    return "an error"


_VERB_WORDS = {"click": "click", "type": "type", "search": "search for", "select": "select", "navigate": "go to",
               "press": "press", "hover": "hover over", "drag": "drag", "scroll": "scroll", "back": "go back",
               "forward": "go forward", "wait": "wait"}
# Linear on any action: the value after the first comma only (a later one never matched where the first did not),
# a value before "[" that ends in a non-space, the spaces before a quote taken once.
_TYPED = re.compile(r"^\s*[A-Za-z_]+\s*+(?:\[[^\],]*,\s*(?P<a>.+?)\]|\(\s*['\"](?P<b>.+?)['\"]|:\s*(?P<c>.*?\S)\s*\[|"
                    r"(?<=\s)['\"](?P<d>.+?)['\"])", re.S)
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

    def norm(s: str) -> str:
        return " ".join(_folded(s).split())

    return v if norm(v) in norm(clean(task)) and label(v) else None


def action_label(action: str) -> str | None:
    """The visible label an action names, in its own case (`click('Buy')` -> `Buy`), or None."""
    if re.search(r"\w\s*\[\s*\d+\s*\]", action):  # "Add to cart [77]": the number is an element index
        return None
    target = action_target(action)
    if not target:
        return None
    # an apostrophe inside a word stays ("Luigi's", not "Luigi s"); one that quotes is a space, as in the target
    flat = " ".join(re.sub(r"[\"\[\]()]|(?<![^\W_])'|'(?![^\W_])", " ", action).split())
    i = flat.replace("'", " ").lower().find(target)  # the same length: offsets hold
    return label(flat[i:i + len(target)] if i >= 0 else target)


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
          r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
# Mar 9, March 9th, Mar-9, Mar9; 9 March, 9th of Mar, 9-Mar, 9Mar (anywhere in a label: 'Dinner on Mar 9')
_DATES = [re.compile(rf"(?<![a-z]){_MONTH}[\s.-]*(\d{{1,2}})(?:st|nd|rd|th)?(?!\d)", re.I),
          re.compile(rf"(?<!\d)(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?[\s.-]*{_MONTH}(?![a-z])", re.I)]


def _days(text: str) -> set[tuple[int, int]]:
    """(month, day) of every date written with a month's name in `text`."""
    out = set()
    for i, pattern in enumerate(_DATES):
        for m in pattern.finditer(text):
            month, day = (m.group(1), m.group(2)) if i == 0 else (m.group(2), m.group(1))
            out.add((_MONTHS.index(month[:3].lower()) + 1, int(day)))
    return out


_TOKENS = re.compile(r"[^\W_]+")


def _parameter_words(other_task: str, other_values: tuple[str, ...]) -> set[str]:
    """The words (folded) that are the other run's own parameters: the names in its task and in what it typed (a
    capitalised word of 3+ letters that does not start the task's sentence, and is no function word: "Denver",
    "John Smith", "Zanzibar") and their tokens of letters and digits ("H100", "UA123"). Not every word it typed: a
    search for "cruise" or "vet" names a kind of thing, which labels of every run share."""
    out: set[str] = set()
    sentences = re.split(r"(?:[.!?;:]|\n)\s*", clean(other_task)) + [clean(value) for value in other_values]
    for k, sentence in enumerate(sentences):
        typed = k >= len(sentences) - len(other_values)
        for i, word in enumerate(_TOKENS.findall(sentence)):
            name = (i or typed) and word[0].isupper() and len(word) >= 3 and word.lower() not in _FUNCTION_WORDS
            if name or (re.search(r"\d", word) and re.search(r"[^\W\d_]", word)):
                out.add(_folded(word))
    return out


_FUNCTION_WORDS = frozenset("the and for with from into onto near this that these those your our their its all any "
                            "new top best".split())


def _foreign(text: str, task: str, other_task: str | None, other_values: tuple[str, ...] = ()) -> bool:
    """A label that is a parameter of the other run (a name, a date, a value it typed) and not of the current one,
    whole or in part ("Denver, CO" after that run's task named Denver, "Zanzibar Beach Resort" after it typed
    Zanzibar); a label with a day ('Mar 9', 'Fri, June 5', 'Dinner on 9-Mar') is another run's unless the current
    task names that day, whatever its task says (a date picker's days are the run's own parameters, often written
    otherwise in its task). `task` may carry the site's name after it: a name of the site is no parameter."""
    days = _days(clean(text))
    if days:
        return not days <= _days(clean(task))
    if not other_task and not other_values:
        return False
    low = " ".join(_folded(text).split())
    mine = " ".join(_folded(clean(task)).split())
    if other_task and low in " ".join(_folded(clean(other_task)).split()) and low not in mine:
        return True
    theirs = _parameter_words(other_task or "", other_values) - set(_TOKENS.findall(mine))
    return any(word in theirs for word in _TOKENS.findall(low))


ANY_ENTRY = "the entry that matches your task"  # a label of another run's own parameters, in a plan

# What cannot be undone or throws the agent's session away: suggested from another run only when the task itself
# asks for it (a stored "next step" of "Delete my account" or "/logout" is not a step towards buying a charger)
_IRREVERSIBLE = re.compile(
    r"\b(?:delete (?:my |your |the |this )?(?:account|profile|orders?|data|history|all|everything|payment|cards?|address)"
    r"|deactivate|erase|wipe|terminate|unsubscribe|revoke|unlink|disconnect|withdraw|disable two|"
    r"close (?:my |your |the )?account|cancel (?:all|my|your|the)? ?(?:orders?|subscriptions?|membership|account|bookings?"
    r"|reservations?|plan)|remove (?:all (?:addresses|cards|items|payment)|payment method)|empty (?:the )?(?:cart|trash)"
    r"|clear (?:cart|history|data)|sign ?out|log ?out|log ?off|forget (?:this )?device"
    r"|reset (?:my |your |the |all )?(?:password|account|settings|preferences|data|device|progress)|factory reset"
    r"|discard(?: all| my| your| the)?(?: changes| draft| edits| order| cart| items)?|deregister|unregister|unenroll"
    r"|opt ?out|remove (?:my |your |the )?account|leave (?:the |this )?(?:group|team|organization|workspace)"
    r"|delete\w*|permanently \w+|deletion|turn off (?:2fa|two|mfa)|end (?:my |your |the )?(?:membership|subscription)"
    r"|exit (?:the |this )?group|unfollow|block (?:this )?(?:user|account|contact)|void (?:the |this )?(?:transaction|order|payment)"
    r"|restore defaults|uninstall\w*|sell (?:all|my|your|everything|off|shares|stocks?|holdings|positions?|crypto)"
    r"|cancel (?:my |your |this |all )\w+|cancel (?:the )?(?:flights?|trips?|tickets?|appointments?|payments?|transfers?"
    r"|trades?)|clear (?:saved |all |my |stored )?(?:passwords?|browsing data|cookies|cache|saved data)"
    # the same in the other languages agents meet (folded: no accents)
    r"|(?:konto|account|profil) loschen|loschen|abmelden|ausloggen|kundigen|(?:gruppe|team) verlassen"
    r"|eliminar(?: (?:la |mi |tu )?cuenta)?|cerrar sesion|darse de baja|cancelar (?:la |mi )?(?:suscripcion|pedido|cuenta|reserva)"
    r"|supprimer(?: (?:le |mon |votre )?compte)?|se deconnecter|deconnexion|annuler (?:la |ma )?(?:commande|reservation|abonnement)"
    r"|resilier|desabonner|usun(?: konto)?|wyloguj\w*|hapus(?: akun)?|keluar(?: dari)?(?: akun| grup)?"
    r"|excluir(?: (?:a |minha )?conta)?|sair(?: do grupo| da conta)?|encerrar sessao|cancelar (?:a )?assinatura)\b")
_UNDO_WORDS = re.compile(r"\b(?:delete|deactivat\w*|erase|wipe|terminat\w*|unsubscrib\w*|revoke|close|closing|cancel\w*"
                         r"|remove|removing|empty|clear|sign ?out|log ?out|log ?off|logging out|signing out|forget"
                         r"|reset\w*|factory|discard\w*|deregist\w*|unregist\w*|unenroll\w*|opt ?out|leav\w*"
                         r"|permanently|turn off|end|exit|unfollow|block|void|restore"
                         r"|losch\w*|abmeld\w*|auslogg\w*|kundig\w*|verlass\w*|elimin\w*|cerr\w*|darse|cancel\w*"
                         r"|supprim\w*|deconn\w*|annul\w*|resili\w*|desabonn\w*|usun\w*|wylog\w*|hapus|keluar"
                         r"|exclu\w*|sair|encerr\w*|uninstall\w*|sell\w*|sold)\b")
# kinds of undoing that are one kind ("Empty cart" for "Clear my cart", "Remove" for "Delete")
_SAME_UNDOING = {"empty": "clear", "remov": "delet", "erase": "delet", "cance": "cance", "unsub": "cance", "termi": "cance"}


def irreversible(words: str, task: str) -> bool:
    """True when `words` (a label or a page, folded) would undo something the task does not ask to undo."""
    found = _IRREVERSIBLE.search(re.sub(r"[-_/]+", " ", words))  # "Delete-my-account" is read as words
    if found is None:
        return False
    said = found.group(0)
    asked = _UNDO_WORDS.findall(_folded(task))
    if re.search(r"(?:out|off)$", said):  # signing out, however it is spelled
        return not any(re.search(r"(?:out|off)$", w) for w in asked)
    undo = _UNDO_WORDS.search(said)  # the task must ask for the same kind of undoing ("delete", "cancel")
    verb = (undo.group(0) if undo else said.split()[0])[:5]  # "konto loschen": the verb comes second
    kind = _SAME_UNDOING.get(verb, verb)
    return not any(w.startswith(verb) or _SAME_UNDOING.get(w[:5], w[:5]) == kind for w in asked)


def step_words(action: str, description: str | None, *, task: str, domain: str | None,
               url: str | None = None, other_task: str | None = None, other_values: tuple[str, ...] = (),
               specific: bool = False) -> str | None:
    """An action in words the agent may read (verb + visible label), or None when nothing safe is left.

    Never an element id, index or coordinate; a typed value only when the current task contains it; a
    navigation only within the run's own site; answers and stops are never suggested. A label of the other
    run's own parameters is "the entry that matches your task" in a plan; with `specific` (what a failed run did
    wrong) it is None: "it went wrong when it tried to click the entry that matches your task" says nothing.
    """
    verb = action_verb(action)
    if verb in {"answer", "none", "other", "wait"}:
        return None
    if verb == "navigate":
        destination = action_target(action)
        if not same_site(destination or url, domain):
            return None
        where = page(destination, domain, depth=1) if destination else None  # the section, not another task's parameters
        if where and not specific and irreversible(re.sub(r"[-_/]+", " ", _folded(where)), task):
            return None
        return f"go to {where} on {site(domain)}" if where and site(domain) else None
    if verb in {"scroll", "back", "forward"}:
        return _VERB_WORDS[verb]
    if verb == "press":
        key = re.search(r"\b(enter|return|tab|escape|esc|space|backspace|delete|arrow ?(?:up|down|left|right)|page ?(?:up|down)"
                        r"|home|end)\b", action_target(action) or "", re.I)
        raw = re.match(r"\s*([A-Za-z_]+)", action)
        if not key or (raw and raw.group(1).lower() not in {"press", "keypress", "key", "send_key", "send_keys", "enter"}):
            return None  # press_sequentially("...") and its kin type text: never echoed
        return f"press {key.group(1).title()}"
    if verb in {"type", "search", "select"}:
        raw_value = typed_value(action)
        value = value_in_task(raw_value, task)
        field = _field_label(action, description)
        if field and raw_value and not value and _folded(raw_value)[:40] in _folded(field) or (
                field and _foreign(field, f"{task} | {domain or ''}", other_task, other_values)):
            field = None  # the "field" is the other run's value
        if field and names_secret(_folded(field)) and not names_secret(_folded(task)):
            return None  # a secret the task does not mention ("Seed phrase", "Gmail password"): never asked for
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
    target = step_label(action, description)
    if target and not task_label(target, task):
        target = None
    if not target:
        return None
    if _foreign(target, f"{task} | {domain or ''}", other_task, other_values):
        return None if specific else f"{_VERB_WORDS.get(verb, verb)} {ANY_ENTRY}"
    if not specific and irreversible(_folded(target), task):
        return None
    if _spoofs_site(target, domain):
        return None
    return f"{_VERB_WORDS.get(verb, verb)} '{target}'"


def _spoofs_site(text: str, domain: str | None) -> bool:
    """A word that spells the site's own name with look-alikes ("Sign in with Amaz0n Secure", "UnitedAirIines",
    "Arnazon" on their sites): digits for letters, a capital I for an l and an l for an I, "rn" for m, "vv" for w,
    a bar for an l; a look-alike of the site, never the site itself."""
    name = (registrable_domain(domain or "") or "").split(".")[0].lower()
    if len(name) < 4:
        return False
    return any(name not in word.lower() and any(name in form for form in _read_as(word)) for word in text.split())


def _read_as(word: str) -> set[str]:
    """The lower-case forms a reader may take `word` for (see `_spoofs_site`), the look-alikes in any combination
    ("Arnaz0n": rn and a digit)."""
    forms = set()
    for digits in {word, unleet(word)}:
        for bars in {digits, digits.replace("I", "l").replace("|", "l")}:
            low = bars.lower()
            for letters in {low, low.replace("rn", "m").replace("vv", "w")}:
                forms |= {letters, letters.replace("l", "i")}
    return forms


def step_label(action: str, description: str | None) -> str | None:
    """The visible label a remembered step acted on (from its description, else its action), whitelisted."""
    labeled = re.search(r"labeled '([^']{1,60})'", description or "")
    target = (label(labeled.group(1)) if labeled else None) or action_label(action)
    if target is None and not re.search(r"\w\s*\[\s*\d+\s*\]", action):  # "Add to cart [77]": no label
        target = _desc_label(description)
    return target


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
    r"|\b(?:click|type|select|hover)\s*\(\s*['\"]?\d+|\bclick\s+\d+\b|\bat \(\d|\bindex\s+\d+", re.I)


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


def steers_somewhere(text: str) -> bool:
    """Whether a clause of a longer text steers (`coach.steering.steers` reads short fragments): a phrased message
    checked clause by clause."""
    return any(steers(_folded(part)) for part in re.split(r"[.;:!?,\n]+", text) if part.strip())


def spells_instruction(text: str) -> bool:
    """True when text spells an instruction or a role word once look-alikes are folded and splits undone."""
    folded = _folded(clean(text))
    squeezed = re.sub(r"[\W_]+", "", folded)
    return _spells_instruction(text) or bool(re.search(r"\b(?:act as|pretend|you are now|do anything now)\b", folded)
                                             or re.search(r"system|assistant|developer", squeezed))


def role_marker(text: str) -> bool:
    """A role name followed by a colon or a look-alike of one, or chat-template markup."""
    t = _folded(clean(text))
    colon = _COLONS.pattern[1:-1]
    return bool(re.search(rf"\b(?:system|assistant|user|human|developer|operator|ai|model|bot|tool|function)\s*[{colon}]",
                          t) or re.search(r"[<>{}\[\]|`]", t))


def odd_letters(text: str) -> bool:
    """Letters that only stand in for Latin ones (small capitals, IPA, Cherokee ...), or mixed look-alikes."""
    t = clean(text)
    words = re.findall(r"\w+", t)
    return bool(_ODD_LETTERS.search(t)) or any(w.translate(CONFUSABLES) != w and _mixed_scripts(w) for w in words)


def disguised_hosts(text: str) -> set[str]:
    """Host names written to slip past a plain host pattern: `evil . com`, `evil(dot)com`, `evil[.]com`, IPs."""
    t = clean(text).lower()
    t = re.sub(r"(?<=\w)\s*(?:\(dot\)|\[dot\]|\[\.\]|\{dot\}|\bdot\b|[.\u00b7\u2027\u2022\u3002\uff0e\uff61\u2024])\s*(?=\w)",
               ".", t)
    found = set(re.findall(r"\b\d{1,3}(?:\.\d{1,3}){3}\b|\bxn--[\w.-]+", t))
    found |= {m for m in re.findall(r"\b(?:[a-z0-9-]+\.)+[a-z]{2,24}\b", t)
              if m.rsplit(".", 1)[-1] in _TLDS}
    if re.search(r"javascript:|data:|file:|//", t):
        found.add("javascript:")
    return found


_TLDS = frozenset("com org net gov edu io co uk de fr es it nl ru cn jp kr in br au ca us info biz app dev ai xyz "
                  "site online shop store top me tv cc ly gg example test local internal".split())
