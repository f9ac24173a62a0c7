"""A remembered step in words the agent may read: a verb and a visible label (`click 'Add to cart'`), a typed
value only when the current task contains it, a navigation only within the run's own site.

Another run's own parameters (a name, a date, a value it typed) become "the entry that matches your task"; what
cannot be undone is suggested only when the task asks for it; a label that spells the site's name with
look-alikes is none.
"""

from __future__ import annotations

import re

from coach.pages import page, same_site, site
from coach.steering import names_secret, unleet
from coach.task_values import OPTIONAL_CODE, SECRET_FIELD, aligned_value, secret_of_task, uncounted, value_in_task
from coach.words import clean, fold, label, task_label
from condenser import action_target, action_verb
from condenser.sites import registrable_domain

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
_MONTH_NAMES = (r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
                r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?")
_MONTH = rf"({_MONTH_NAMES})\.?"
# Mar 9, March 9th, Mar-9, Mar9; 9 March, 9th of Mar, 9-Mar, 9Mar (anywhere in a label: 'Dinner on Mar 9')
_DATES = [re.compile(rf"(?<![a-z]){_MONTH}[\s.-]*(\d{{1,2}})(?:st|nd|rd|th)?(?!\d)", re.I),
          re.compile(rf"(?<!\d)(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?[\s.-]*{_MONTH}(?![a-z])", re.I)]
# the end of a range that names its month once ("June 18 to 21", "Mar 3-7th"): the month of its start
_RANGE_END = re.compile(rf"(?<![a-z]){_MONTH}[\s.-]*\d{{1,2}}(?:st|nd|rd|th)?\s*(?:-|–|to|till|until|through|thru)\s*"
                        rf"(\d{{1,2}})(?:st|nd|rd|th)?(?![\d:]|\s*(?:{_MONTH[1:-4]})\b|\s*(?:am|pm|h)\b)", re.I)


def _days(text: str) -> set[tuple[int, int]]:
    """(month, day) of every date written with a month's name in `text`."""
    out = set()
    for i, pattern in enumerate(_DATES):
        for m in pattern.finditer(text):
            month, day = (m.group(1), m.group(2)) if i == 0 else (m.group(2), m.group(1))
            out.add((_MONTHS.index(month[:3].lower()) + 1, int(day)))
    for m in _RANGE_END.finditer(text):
        out.add((_MONTHS.index(m.group(1)[:3].lower()) + 1, int(m.group(2))))
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
                out.add(fold(word))
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
    low = " ".join(fold(text).split())
    mine = " ".join(fold(clean(task)).split())
    if other_task and low in " ".join(fold(clean(other_task)).split()) and low not in mine:
        return True
    if _counts(low) - _counts(mine, anywhere=True) - {"1"}:  # one of a thing is every task's default
        return True  # "Choose 10 nights" on a task for 2 nights: how many is the task's to say
    theirs = _parameter_words(other_task or "", other_values) - set(_TOKENS.findall(mine))
    return any(word in theirs for word in _TOKENS.findall(low))


# a number of things a booking or an order counts ("10 nights", "9 guests", "quantity 50")
_COUNTED = re.compile(r"\b(\d{1,4}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s*(?:-\s*)?"
                      r"(?:nights?|days?|guests?|rooms?|adults?|children|kids?|tickets?|passengers?|travell?ers?"
                      r"|people|persons?|seats?|pieces?|pcs|units?|beds?|bedrooms?|baths?|bathrooms?|weeks?|months?)\b"
                      r"|\b(?:quantity|qty)\s*(?:to\s*|of\s*|is\s*)?(\d{1,4})\b")
_NUMBER_WORDS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine ten eleven "
                                                   "twelve".split())}


def _counts(text: str, anywhere: bool = False) -> set[str]:
    """The counts (as digits) a folded text names beside what they count, or (`anywhere`: a task) every number."""
    if anywhere:
        return {_NUMBER_WORDS.get(n, n) for n in re.findall(r"\b(?:\d{1,4}|" + "|".join(_NUMBER_WORDS) + r")\b", text)}
    return {_NUMBER_WORDS.get(n, n) for m in _COUNTED.finditer(text) for n in m.groups() if n}


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
    asked = _UNDO_WORDS.findall(fold(task))
    if re.search(r"(?:out|off)$", said):  # signing out, however it is spelled
        return not any(re.search(r"(?:out|off)$", w) for w in asked)
    undo = _UNDO_WORDS.search(said)  # the task must ask for the same kind of undoing ("delete", "cancel")
    verb = (undo.group(0) if undo else said.split()[0])[:5]  # "konto loschen": the verb comes second
    kind = _SAME_UNDOING.get(verb, verb)
    return not any(w.startswith(verb) or _SAME_UNDOING.get(w[:5], w[:5]) == kind for w in asked)


# What a step commits the agent to beyond finding and choosing: putting things in a cart or a list, buying,
# booking, sharing, subscribing, posting. Another run's plan suggests one only when the task asks for that kind
# ("click 'Add to Wish List'" came from a run whose task saved to a wish list, not from one that filters bras).
_COMMITMENTS = [
    (re.compile(r"\badd(?:ed)? (?:it |this |item )?to (?:my |your |the )?(?:cart|bag|basket|trolley)\b|\badd to (?:my )?order\b"),
     re.compile(r"\b(?:cart|bag|basket|trolley|buy|purchase|order|checkout|check out|add|get)\b")),
    (re.compile(r"\b(?:wish ?list|favou?rites?|saved items|registry|save for later|bookmark)\b|^(?:save|like|follow|heart)$"),
     re.compile(r"\b(?:wish ?lists?|favou?rites?|favou?rite|save|saved|like|follow|registry|bookmark|heart|list)\b")),
    (re.compile(r"^share\b|\bshare (?:this|on|via|with)\b|\b(?:send|email) (?:this |it )?to a friend\b"),
     re.compile(r"\b(?:share|send|email|mail|tell|post)\b")),
    (re.compile(r"\bsubscribe\b|\bsign ?up\b|\bregister\b|\bcreate (?:an |your |my )?account\b|\bjoin (?:now|free|us|today)\b"
                r"|\bnewsletter\b"),
     re.compile(r"\b(?:subscri\w*|sign ?up|register\w*|join|account|newsletter|member\w*|enrol\w*)\b")),
    (re.compile(r"\bbuy (?:it )?now\b|\bpurchase\b|\bplace (?:your |my |the )?order\b|\bcheck ?out\b|\bproceed to (?:checkout|payment)\b"
                r"|\bpay now\b|\bcomplete (?:purchase|order|booking)\b|\bbook (?:it |this )?now\b|\breserve (?:now|it|this)\b"
                r"|\bconfirm (?:booking|reservation|purchase|order|and pay)\b"),
     re.compile(r"\b(?:buy\w*|purchas\w*|order\w*|checkout|check out|pay\w*|book\w*|reserv\w*|rent\w*|tickets?|cart|hire"
                r"|subscri\w*|donat\w*|get)\b")),
    # a charge that renews or an extra that costs: trials, upgrades, insurance, warranties, store cards
    (re.compile(r"^(?!.*\b(?:no|decline|declined|without|skip|remove|don t|not now|no thanks|cancel)\b).*?"
                r"(?:\b(?:free )?trial\b|\bupgrade\b|\bgo premium\b|\btry (?:\w+ )?(?:premium|prime|plus|pro)\b"
                r"|\bauto[ -]?renew\w*\b|\binsurance\b|\bprotection (?:plan|package)\b|\bwarrant(?:y|ies)\b"
                r"|\bapply (?:for |now )?(?:a |the |our )?(?:\w+ )?(?:store |credit )?card\b|\bvip\b|\bmembership\b"
                r"|\bextended (?:care|service|protection)\b)"),
     re.compile(r"\b(?:trial|upgrad\w*|premium|prime|renew\w*|insur\w*|protect\w*|warrant\w*|card|vip"
                r"|member\w*|subscri\w*|extended|coverage)\b")),
    (re.compile(r"\bwrite (?:a |your )?review\b|\brate (?:this|it)\b|\bpost (?:a |your )?(?:review|comment|question)\b"
                r"|\bdonate\b|\badd to (?:playlist|queue|library)\b"),
     re.compile(r"\b(?:review\w*|rat(?:e|ing)|post|comment|donat\w*|playlist|queue|library|add)\b")),
]


def unasked(words: str, task: str) -> bool:
    """True when `words` (a label, folded) commit the agent to something the task does not ask for (a cart, a
    list, a purchase or booking, sharing, an account, a review)."""
    folded_task = fold(task)
    return any(label_kind.search(words) and not asked.search(folded_task) for label_kind, asked in _COMMITMENTS)


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
        words = re.sub(r"[-_/]+", " ", fold(where)) if where else ""
        if where and not specific and (irreversible(words, task) or unasked(words.strip(), task)):
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
        value = value_in_task(raw_value, task) or aligned_value(raw_value, other_task, task)
        field = _field_label(action, description, task)
        if field and raw_value and not value and fold(raw_value)[:40] in fold(field) or (
                field and _foreign(field, f"{task} | {domain or ''}", other_task, other_values)):
            field = None  # the "field" is the other run's value
        named = field or _field_text(action, description)  # the raw name too: "Date of birth" is no label to quote
        if named and names_secret(fold(named)) and not names_secret(fold(task)):
            return None  # a secret the task does not mention ("Seed phrase", "Gmail password"): never asked for
        if value and secret_of_task(value, task) and not (named and SECRET_FIELD.search(fold(named))):
            return None  # the task's password, PIN or card into a field for something else (a review, a gift note)
        if not value and named and (code := OPTIONAL_CODE.search(fold(named))) and code.group(0) not in fold(task):
            return None  # a coupon or promo code the task does not give: "the value your task gives" invites one made up
        if verb == "select":
            if value:
                return f"select '{value}'" + (f" in '{field}'" if field else "")
            return f"choose the option your task asks for in '{field}'" if field else "choose the option your task asks for"
        if verb == "search":
            return f"search for '{value}'" if value else (f"search in the '{field}' box" if field else
                                                           "search with the words of your task")
        if value:
            return f"type '{value}'" + (f" into the '{field}' field" if field else "")
        # a field it cannot name is still a step: a plan that left it out would submit the form unfilled
        return f"fill in the '{field}' field with the value your task gives" if field else "type the value your task gives"
    target = step_label(action, description)
    if target and not task_label(target, task):
        target = None
    if not target:
        return None
    if _foreign(target, f"{task} | {domain or ''}", other_task, other_values):
        return None if specific else f"{_VERB_WORDS.get(verb, verb)} {ANY_ENTRY}"
    if not specific and (irreversible(fold(target), task) or unasked(fold(target), task)):
        return None
    if _spoofs_site(target, domain):
        return None
    return f"{_VERB_WORDS.get(verb, verb)} '{uncounted(target, task)}'"


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
    if target is None and not re.search(r"\w\s*\[\s*\d+\s*\]", action) and not _own_words(action):
        target = _desc_label(description)  # "Add to cart [77]" names no label; "click('TaskIsDone')" was refused
    return target


def _own_words(action: str) -> bool:
    """The action names its element by words of its own (refused if `action_label` gave none)."""
    return bool(re.search(r"[^\W\d_]{2}", clean(action_target(action) or "")))


def _field_text(action: str, description: str | None) -> str | None:
    """The name of the field a step typed into, as the run wrote it (not whitelisted: for checks only)."""
    m = _FIELD_HINT.search(action.strip())
    if m:
        return clean(m.group("f"))
    m = re.search(r"labeled '([^']{1,60})'", description or "")
    return clean(m.group(1)) if m else None


def _field_label(action: str, description: str | None, task: str) -> str | None:
    """The field's name, quoted only in a script of the task (as a click's label is)."""
    return task_label(_field_text(action, description), task)


def _desc_label(description: str | None) -> str | None:
    """The label inside a precomputed step description (`click the element labeled 'X'`, `click gift cards`)."""
    if not description:
        return None
    m = re.search(r"labeled '([^']{1,60})'", description)
    if m:
        return label(m.group(1))
    verb, _, rest = description.partition(" ")
    return label(rest) if rest and not rest.startswith("(") else None
