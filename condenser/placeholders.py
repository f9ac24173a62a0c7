"""What redaction writes in place of what it removes ([SECRET], [EMAIL], [CARD], [PHONE], [IBAN], [ADDRESS], [ID]),
how to tell a placeholder already written (a text redacted twice stays as it was), and the words that stand after
a secret's name without being its value ("password required", "PGPASSWORD=none")."""

from __future__ import annotations

import re

SECRET = "[SECRET]"
EMAIL = "[EMAIL]"
CARD = "[CARD]"
PHONE = "[PHONE]"
IBAN = "[IBAN]"
ADDRESS = "[ADDRESS]"
NATIONAL_ID = "[ID]"

PLACEHOLDER = re.compile(r"\[[A-Z]+\]")

NOT_VALUES = frozenset(
    "required incorrect invalid wrong correct not too empty missing expired weak strong case needed mandatory "
    "optional changed reset saved updated shown hidden visible masked being now also the a an at in on for to "
    "still already different same ok okay accepted rejected valid blank short long entered typed filled set stored "
    "sent protected encrypted secure insecure and or field box input manager page link button form banner "
    "none null true false yes no bearer basic digest token".split())
