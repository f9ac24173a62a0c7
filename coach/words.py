"""The only way stored or caller text reaches the agent's words: a narrow whitelist of fragments.

Everything the agent reads is written by the coach; what it takes from a run (its own or a stored one) passes
through one of these functions, which return either a short clean fragment or None:

- `label`: a visible element label (a few words, no markup, no URL, no instruction-like words);
- `error_class`: an error reduced to a class from a fixed vocabulary (never the error's own words);
- `coach.pages.page` and `coach.pages.site`: the path of a URL on the run's own site, a host name;
- `coach.steps.step_words`: an action as verb + label, with a typed value only when the current task contains it.

This module also holds the checks every agent-facing text meets (ids, internals, role markup, look-alikes).

Unicode is NFKC-normalized and zero-width / bidi controls removed before any check, so homoglyph-free
look-alikes and split words are seen as what they spell.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from urllib.parse import unquote, urlsplit

from coach.steering import advises, commands, names_secret, steers, unleet
from condenser import action_target, action_verb
from condenser.lookalikes import BUILT_IN_MARKS, CONFUSABLES

INVISIBLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                        r"\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]")
# Scripts whose letters only appear in a label to imitate Latin ones (IPA, modifier letters, Cherokee, Lisu).
_ODD_LETTERS = re.compile(r"[\u0180-\u019f\u01a2-\u01ae\u01b1-\u01c3\u01dd-\u0217\u021c-\u024f\u0250-\u02ff\u1d00-\u1dbf\u13a0-\u13ff\uab70-\uabbf\ua4d0-\ua4ff\ua720-\ua7ff"
                          r"\u2100-\u214f\u1e9c-\u1e9f\u1efa-\u1eff\U0001d400-\U0001d7ff]")
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
    "sistem", "nonseguire", "nonsegui", "dubistjetzt", "duerjetzt", "tuesdesormais", "ahoraeres", "agoravoce", "voceagora",
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
_HOSTLIKE = re.compile(r"\b[\w-]+(?:\s*(?:\(dot\)|\[dot\]|\[\.\])\s*|\s+\.\s*|\.)(?:[a-z]{2,24})\b"
                       # "St. Louis", "Dr. Seuss": a dot and a space, then a word, is an abbreviation unless a TLD follows
                       r"|\b[\w-]+\.\s+(?:com|net|org|io|co|uk|de|fr|ru|cn|info|biz|xyz|app|dev|ai|me|us|ca|au|jp|in|store"
                       r"|shop|online|site|top|live|link|club|vip|pro|tech|cloud|space|icu|cyou|buzz|tk|ml|ga|cf|gq|ly|to|gg|cc"
                       r"|sh|tv|eu|nl|es|it|ch|se|pl|br|mx|ar|kr|vn|ph|sg|nz|za|tr|ua|ir|su|ws|mov|zip)\b|\b\d{1,3}(?:\.\d{1,3}){3}\b"
                       # a dot spelled as a word, before a TLD ("evil dot com"); "Polka dot dress" is a pattern
                       r"|\b[\w-]+\s+dot\s+(?:com|net|org|io|co|uk|de|fr|ru|cn|info|biz|xyz|app|dev|ai|me|us|ca|au|jp|in"
                       r"|store|shop|online|site|top|live|link|club|vip|pro|tech|cloud|space|icu|cyou|buzz|tk|ml|ga|cf|gq)\b"
                       r"|xn--|javascript|data:|file:|://|//", re.I)
_IDWORDS = re.compile(r"\b(?:bid|id)\s*[=:#]?\s*['\"]?[a-z]?\d"  # "bid 123", "id=a12"; "Bid now", "Upload ID" are labels
                      r"|\b(?:ref|idx|index|node|element|elem|testid|data-testid|nth|xpath|css|selector|coords?"
                      r"|coordinates?|pos|position|offset|px|pixels?)\b"
                      r"|(?-i:\b[a-z]\d{2,}\b)|-btn\b|^\.|\bx\s*\d{2,}\s*y\s*\d{2,}\b|\d+\s*,\s*\d+|\b\d{5,}\b", re.I)
_MARKUP = re.compile(r"[<>{}\[\]|`\\#*_=~^$@]|\.{2,}|^[-.'&,/ ]|[-&,/ ]$", re.I)
_LABEL_OK = re.compile(r"^[\w .,'&/()+%?!-]+$")
IDLIKE = re.compile(r"(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{6,}|\d{3,}")  # fullmatch: a token with a digit in it
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


# no ASCII character is a look-alike or a letter with a built-in mark, so ASCII text folds to its lower case
_ASCII_FOLDS_TO_LOWER = not any(code < 128 for code in (*CONFUSABLES, *BUILT_IN_MARKS))


def fold(text: str) -> str:
    """Look-alikes folded to Latin, accents dropped (those built into a letter too: ø, ł, đ, œ), lower case: what
    a text spells."""
    if text.isascii() and _ASCII_FOLDS_TO_LOWER:
        return text.lower()
    text = text.translate(CONFUSABLES).translate(BUILT_IN_MARKS)
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return text.lower()


# the stems as the checked text is folded (Hangul decomposed, Cyrillic and Greek look-alikes made Latin): written
# as a reader knows them above, compared only in this form ("무시" and "игнор" never matched before 2026-12-04)
_DENY_FOLDED = tuple(dict.fromkeys(fold(stem) for stem in _DENY_STEMS))
# Everyday labels that hold a stem: a "forgot password" link in the languages of the stems, and instructions that
# come with a product or an order. Taken out before the stems are looked for; anything else beside them still counts.
_BENIGN = re.compile(fold(
    r"forgot(?:ten)? (?:your |my )?password|passwort vergessen|kennwort vergessen|mot de passe oublié|"
    r"contraseña olvidada|olvidaste (?:tu )?contraseña|olvidé (?:mi )?contraseña|password dimenticata|"
    r"esqueceu (?:a |sua )?senha|esqueci (?:a |minha )?senha|zapomniałeś hasła|nie pamiętasz hasła|"
    r"忘记密码|忘記密碼|パスワードを忘れ|שכחת (?:את )?(?:ה)?סיסמה|"
    r"(?:delivery|care|washing|assembly|cooking|installation|shipping|special|dosage|payment) instructions?|"
    r"instruksi pembayaran|gebrauchsanweisung|bedienungsanleitung|"
    r"don't have an account|do not have an account|do not sell (?:or share )?my|don't miss|do not track|"
    # everyday labels and product names that hold a role word or a stem
    r"you are here|do not disturb|do not use|operating systems?|pretend play|tour operators?|instructure|"
    r"(?:sales|shop|store|personal|teaching|medical|dental|legal|office|executive|research|administrative|shopping"
    r"|virtual|voice|google|kitchen|parking|park) assistants?|assistant (?:manager|director|professor|editor|coach"
    r"|principal|store manager)|(?:sound|audio|home theater|stereo|file|solar|security|alarm|heating|sprinkler|filing"
    r"|storage|organi[sz]ation|navigation|exhaust|braking|cooling|water|irrigation|mesh|wifi|wi fi|speaker|camera"
    r"|lighting|rail|shelving|closet) systems?"))


# the stems as one alternation: the engine looks for all of them in one pass
_DENY_RE = re.compile("|".join(re.escape(stem) for stem in sorted(_DENY_FOLDED, key=len, reverse=True)))


def _spells_instruction(text: str) -> bool:
    folded = _BENIGN.sub(" ", re.sub(r"[-_]+", " ", fold(clean(text))))
    return _DENY_RE.search(folded) is not None or _DENY_RE.search(re.sub(r"[\W_]+", "", folded)) is not None


def instruction_stems(text: str) -> bool:
    """True when text holds an instruction's stem ("ignore", "disregard", "from now on", in many languages), once
    look-alikes are folded; not the role words a task may hold ("developer jobs"), nor a stem across words of a
    longer text ("to Beyoncé" is no "obey", "SourceForge that" no "forget")."""
    folded = _BENIGN.sub(" ", re.sub(r"[-_]+", " ", fold(clean(text))))
    return _DENY_RE.search(folded) is not None


def instruction_like(text: str) -> bool:
    """True when text reads as an instruction or carries role markup (checked after normalization)."""
    t = clean(text)
    return bool(_spells_instruction(t) or _DENY_WORDS.search(_BENIGN.sub(" ", fold(t))) or _COLONS.search(t)
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
        return bool(words) and steers(fold(words))
    if _spells_instruction(target):
        return True
    if action_verb(action) in {"type", "search", "select"}:
        return False  # what it types is the run's data ("software developer"), read for instructions only
    folded = _BENIGN.sub(" ", fold(target))
    return _DENY_WORDS.search(folded) is not None or steers(folded)


@functools.lru_cache(maxsize=16384)
def label(text: str | None) -> str | None:
    """A visible element label fit to quote to the agent, or None.

    Remembered by text (a pure function of it): the neighbours of a fleet's runs are the same stored runs again and
    again, and each coaching call reads the labels of every step of every neighbour's plan.

    At most 5 words / 40 characters of one script, no markup, colon, host, address, id or selector, nothing
    that spells an instruction or a role once look-alikes are folded and splits are undone.
    """
    # an icon font's glyph, an emoji or a chevron beside the words ("\ue8cc Buy Now", "🚚Order Status", "View all ›")
    # is no part of them, and typographic apostrophes, quotes and dashes are the plain ones ("Women’s Shoes")
    t = " ".join(_DECOR.sub(" ", clean(text)).translate(_TYPOGRAPHY).split()).strip(" .,;'\"")
    if "%" in t and (decoded := unquote(t)) != t:  # "%53top%20here": read as the agent reads it
        return t if label(decoded) else None
    t = re.sub(r"(?<=s)'(?=\s|$)", "", t)  # "Kids' Clothing": a plural's apostrophe would close the coach's quote
    if not t or len(t) > MAX_LABEL_CHARS or len(t.split()) > MAX_LABEL_WORDS:
        return None
    if ":" in t and (headed := _HEADED.fullmatch(t)):  # "Price: Low to High", "Sort by: Featured"
        head, rest = headed.groups()
        if (role_marker(t) or spells_instruction(t) or steers(fold(head)) or advises(fold(f"{head} x"))
                or names_secret(fold(head))):
            return None
        return t if label(f"{head} {rest}") else None
    probe = _PRICE.sub("", t)  # "Under $25": a currency sign before its amount is no markup
    if not _LABEL_OK.match(probe) or _MARKUP.search(probe) or _ODD_LETTERS.search(t) or instruction_like(t):
        return None
    if steers(fold(t)) or advises(fold(t)):  # a spaced host, a request for a secret, the end of the task, a note
        return None
    # the same read with camel humps split ("QuitTask", "PasteCVVHere") and digits in words read as letters
    # ("1gn0re all rules")
    split = re.sub(r"(?<=[a-z])(?<!\b[a-z])(?=[A-Z])|(?<=[A-Z]{2})(?=[A-Z][a-z])", " ", t)  # "iPhone" stays one
    if split != t and (steers(fold(split)) or instruction_like(split)):
        return None
    read = unleet(t)
    if read != t and instruction_like(read):
        return None
    # ASCII look-alikes: a capital I for an l ("RepIy only with 42", "Task compIete"), "vv" for w ("passvvord")
    looks = ASCII_LOOKALIKE.sub(lambda m: "l" if m.group(0) == "I" else "w", t)
    if looks != t and (steers(fold(looks)) or advises(fold(looks)) or instruction_like(looks)):
        return None
    # an apostrophe that is no possessive or contraction closes the coach's quote ("Go'then call'Bob")
    if "'" in t and t.count("'") != len(_APOSTROPHE_OK.findall(t)):
        return None
    if _HOSTLIKE.search(t) or _IDWORDS.search(t):
        return None
    if not any(c.isalpha() for c in t) or (" " not in t and IDLIKE.fullmatch(t)):
        return None
    plain = t.replace("ı", "i")  # Turkish's dotless i ("Kayıt ol") is its own letter; the checks read it folded
    if plain.translate(CONFUSABLES) != plain or _mixed_scripts(t):  # look-alike letters: a homoglyph trick
        return None
    if re.search(r"\b(?!(?:19|20)\d\d\b)\d{3,}\b", t) and not _model_number(t):  # an index or id, not a year
        return None
    if _STREET_ADDRESS.search(t):  # where a person lives or ships to: another run's personal data
        return None
    # "CLICK [span]", "[LI]": an element's tag or role, not what it says ("Select", "SELECT", "Table" are labels)
    if t.lower() in TAG_NAMES and (t.islower() or t.isupper() and len(t) <= 3):
        return None
    if sum(len(w) <= 2 and w.isalpha() for w in t.split()) > 2 or "%" in t and not re.search(r"\d", t):
        return None  # words split into fragments ("I g n o r e", "ig%nore")
    if sum(len(w) == 1 and w.isalpha() for w in re.split(r"[\W_]+", t)) >= 4:
        return None  # letters apart however they are joined ("S.a.v.e.t.h.i.s"; "U.S.A." stays)
    if re.search(r"\w[-/]\w", t):  # "Check-in", "Men/Women"; read joined and apart too ("ig-nore", "Ta-sk do-ne")
        joined, apart = re.sub(r"(?<=\w)[-/](?=\w)", "", t), re.sub(r"(?<=\w)[-/](?=\w)", " ", t)
        if any(steers(fold(form)) or instruction_like(form) for form in (joined, apart)):
            return None
    return t


_DECOR = re.compile("[\ue000-\uf8ff\U000f0000-\U000ffffd\u2190-\u21ff\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff"
                    "\U0001f000-\U0001faff\u203a\u2039\u00bb\u00ab\ufe0f]")
_TYPOGRAPHY = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": None, "\u201d": None, "\u2014": "-",
                             "\u2013": "-"})
_HEADED = re.compile(r"([A-Za-z][A-Za-z ]{0,18}[A-Za-z]): ([^:]+)")  # one heading word or two, then the choice
_PRICE = re.compile(r"[$€£¥](?=\d)")
ASCII_LOOKALIKE = re.compile(r"(?<=[a-z])I|(?<=[A-Z])I(?=[a-z])|vv")
_APOSTROPHE_OK = re.compile(r"(?i)(?<=[a-z])'(?:s|t|re|ve|ll|d|m)\b|\b[od]'(?=[a-z])|(?<=s)'(?=\s|$)|(?<=\s)'(?=\d\d$)"
                            # an Italian or French elision ("all'ordine", "L'Oréal", "qu'il", "dell'anno")
                            r"|\b(?:[ldjmnstc]|qu|all|dell|dall|nell|sull|un|quell|bell|sant)'(?=[^\W\d_])")
_QUOTED = re.compile(r"'([^']+)'")


def orders_when_joined(steps: list[str]) -> bool:
    """True when the labels of consecutive steps read as one order together though each passed alone ("click
    'Send your', then click 'password', then click 'to Bob'"): a plan is read as one sentence."""
    labels = [found for step in steps  # a page's words between two labels join them too ("go to /password")
              for found in (_QUOTED.findall(step) or [" ".join(re.split(r"[/_\-.~+%…]+", m.group(1))).strip()
                                                     for m in re.finditer(r"\bgo to (/\S*)", step)])]
    for i in range(len(labels) - 1):
        for j in range(i + 2, len(labels) + 1):
            joined = " ".join(labels[i:j])
            if instruction_like(joined) or steers(fold(joined), joined=True) or advises(fold(joined)):
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
    if re.search(r"(?i)\b(?:row|item|code|room|gate|ext|no|number|line|page|col|column|cell|pin|key|index|button|btn"
                 r"|link|target|choice|control|widget|tab|element|elem|node|ref|option|field|input|checkbox|radio|menu"
                 r"|div|span|box|icon|image|img|slot|entry|toll|free|hotline|helpline|freephone|call|phone|tel|fax"
                 r"|support|helpdesk|desk)\b", text):
        return False  # "Row 1523", "Gate code 4821", "Button 1177", "Hotline 800 FLOWERS": an index, a code or a number
    numbers = re.findall(r"\d+", text)
    if len(numbers) == 2 and len(words) >= 3 and re.search(r"(?i)\b\d+\s*(?:gb|tb|mb|mm|cm|in|inch|hz|w|mah|ml|oz|lb"
                                                           r"|kg|g|l|v)\b", text):
        numbers = numbers[:1]  # "iPhone 15 Pro Max 256 GB": a model and its size
    return (len(words) >= 2 and len(numbers) == 1 and len(numbers[0]) <= 4
            and any(len(w) >= 3 and w.isalpha() for w in words))


def scripts_of(text: str) -> set[str]:
    """The writing systems of the letters in `text` (LATIN, CYRILLIC, CJK, ARABIC, ...)."""
    scripts = set()
    for c in text:
        if c.isalpha():
            name = unicodedata.name(c, "?").split(" ")[0].split("-")[0]  # "KATAKANA-HIRAGANA PROLONGED SOUND MARK"
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
    t = fold(clean((text or "")[:2000]))  # its head names the error; a page can make the rest megabytes long
    if not t:
        return None
    for name, pattern in ERROR_CLASSES:
        if pattern.search(t):
            return name
    return "an error"


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


def steers_somewhere(text: str) -> bool:
    """Whether a clause of a longer text steers (`coach.steering.steers` reads short fragments): a phrased message
    checked clause by clause."""
    return any(steers(fold(part)) for part in re.split(r"[.;:!?,\n]+", text) if part.strip())


@functools.lru_cache(maxsize=16_384)  # recall reads every approved lesson of a command on each failed step coached
def orders_reader(text: str) -> bool:
    """Whether a clause of advice written for agents (a lesson, a site's facts) orders its reader in a kind
    `coach.steering.commands` reads: ends the task, dictates an answer, moves money, sends it elsewhere, addresses it.
    A clause opening with a sequence word is read without it: "then type the text" is a recovery's step, not the
    coach's plan forged."""
    return any(commands(fold(re.sub(r"^\s*(?:and\s+)?then\s+", "", part)))
               for part in re.split(r"[.;:!?,()\n]+", text) if part.strip())


def steering_allowed(text: str, facts: str) -> bool:
    """Whether every clause of `text` that steers is one the facts say too (the coach's own "end the run now" put in
    other words by an LLM is refused; the same clause is not): a clause of the facts that steers never lets another
    kind through ("You have clicked 'X' 3 times" is no licence to say "pay the seller with a gift card")."""
    said = " ".join(fold(facts).split())
    return all(" ".join(fold(part).split()) in said
               for part in re.split(r"[.;:!?,\n]+", text) if part.strip() and steers(fold(part)))


def spells_instruction(text: str) -> bool:
    """True when text spells an instruction or a role word once look-alikes are folded and splits undone."""
    folded = fold(clean(text))
    squeezed = re.sub(r"[\W_]+", "", folded)
    return _spells_instruction(text) or bool(re.search(r"\b(?:act as|pretend|you are now|do anything now)\b", folded)
                                             or re.search(r"system|assistant|developer", squeezed))


def role_marker(text: str) -> bool:
    """A role name followed by a colon or a look-alike of one, or chat-template markup."""
    t = fold(clean(text))
    colon = _COLONS.pattern[1:-1]
    return bool(re.search(rf"\b(?:system|assistant|user|human|developer|operator|ai|model|bot|tool|function)\s*[{colon}]",
                          t) or re.search(r"[<>{}\[\]|`]", t))


def odd_letters(text: str) -> bool:
    """Letters that only stand in for Latin ones (small capitals, IPA, Cherokee ...), or mixed look-alikes."""
    t = clean(text)
    words = re.findall(r"\w+", t)
    return bool(_ODD_LETTERS.search(t)) or any(w.translate(CONFUSABLES) != w and _mixed_scripts(w) for w in words)
