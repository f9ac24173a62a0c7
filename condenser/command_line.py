"""Passwords on a command line, where a tool's flag rather than a name says what the value is (`mysql -pX`,
`sshpass -p X`, `curl -u bob:X`, `keytool -storepass X`, `net use Z: \\\\srv\\share X`, `openssl -pass pass:X`,
`echo X | docker login --password-stdin`, `echo X | sudo -S`), and shell variables named for a secret with the
name glued on (`PGPASSWORD=X`). Called from `condenser.credentials`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from condenser.placeholders import NOT_VALUES, PLACEHOLDER, SECRET
from condenser.scan import WORD_STARTS, substitute_at

# Passwords on a command line, where the flag, not a name, says what the value is: "mysql -uroot -pS3cret",
# "sshpass -p x ssh", "redis-cli -a x", "curl -u bob:x", "smbclient -U bob%x", "htpasswd -b file bob x",
# "docker login -p x". The command and its flag are looked for within one command (up to ; | & or a line's end).
_CLI_VALUE = r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'`\]]+)"
_CLI = re.compile(
    r"\b(?:"
    r"(?i:mysql(?:dump|admin|import|show|check|sh)?|mariadb(?:-dump|-admin|dump|admin)?)\b[^\n;|&]{0,200}?\s-p(?P<glued>"
    + _CLI_VALUE + r")"
    r"|(?:(?i:sshpass)\s+-p\s*|(?i:redis-cli)\b[^\n;|&]{0,200}?\s(?:-a\s+|--pass(?:\s+|=))"
    r"|(?i:docker|podman|helm|oras|az)\s+(?:registry\s+|acr\s+)?login\b"
    r"[^\n;|&]{0,200}?\s(?:-p\s*|--password(?:\s+|=)))(?P<flag>" + _CLI_VALUE + r")"
    r"|(?i:curl|https?)\b[^\n;|&]{0,200}?\s(?:-u\s*|--user(?:\s+|=)|-a\s+|--auth(?:\s+|=))[\"']?[^\s:\"']*:(?P<user>" + _CLI_VALUE + r")"
    r"|(?i:smbclient)\b[^\n;|&]{0,200}?\s(?:-U|--user)(?:\s+|=)[\"']?[^\s%\"']+%(?P<smb>" + _CLI_VALUE + r")"
    r"|(?i:htpasswd)\s+-\w*b\w*\s+(?:\S+\s+){2}(?P<htpasswd>" + _CLI_VALUE + r")"
    # mongosh -p x, ldapsearch -w x, lftp -u bob,x, sqlcmd -P x, zip -P x, 7z -px, keytool -storepass x
    r"|(?:(?i:mongo(?:sh|dump|restore|export|import|stat|top|files)?)\b[^\n;|&]{0,200}?\s(?:-p|--password)(?:\s+|=)"
    r"|(?i:ldap(?:search|modify|add|delete|passwd|compare|whoami|modrdn|exop))\b[^\n;|&]{0,200}?\s-w\s*"
    r"|(?i:sqlcmd|bcp|osql|isql)\b[^\n;|&]{0,200}?\s-P\s*|(?i:zip|unzip)\b(?!\s+codes?\b)[^\n;|&]{0,200}?\s-P\s+"
    r"|(?i:rdesktop)\b[^\n;|&]{0,200}?\s-p\s*|(?i:x?freerdp|wlfreerdp|sdl-freerdp)\b[^\n;|&]{0,200}?\s/p:"
    r")(?P<tool>" + _CLI_VALUE + r")"
    r"|(?i:7z[ar]?|rar|unrar)\b[^\n;|&]{0,200}?\s-p(?P<sevenzip>" + _CLI_VALUE + r")"
    r"|(?i:lftp)\b[^\n;|&]{0,200}?\s-u\s+[\"']?[^\s,\"']*,(?P<lftp>" + _CLI_VALUE + r")"
    # Windows' "net use [Z:] \\srv\share <password> [/user:bob]", the password before or after its flags
    r"|(?i:net\s+use)\s+(?:(?:[A-Za-z]:|\*)\s+)?\\\\[^\s;|&]+(?:\s+/[^\s;|&]+)*\s+(?P<netuse>(?!/)" + _CLI_VALUE + r")"
    # openssl's "-k x" and "-pass pass:x" (also -passin, -passout, -kfile names a file)
    r"|(?i:openssl)\b[^\n;|&]{0,200}?\s(?:-k\s+|-pass(?:in|out)?\s+[\"']?pass:)(?P<openssl>" + _CLI_VALUE + r"))")
# A shell variable named for a secret with its name glued on (PGPASSWORD=x, SSHPASS=x, GITHUBTOKEN=x): written in
# capitals, as the environment's names are; one with a separator (DB_PASSWORD=x) is a secret-named field already.
_ENV_SECRET = re.compile(r"(?<![\w$])(?:[A-Z][A-Z0-9]*(?:PASSWORD|PASSWD|PWD|PASS|SECRET|TOKEN|APIKEY|AUTH)"
                         r"|(?i:[a-z][a-z0-9]*(?:password|passwd|secret|apikey)))=(?P<val>" + _CLI_VALUE + r")")
# keytool's and jarsigner's password flags, each of them (-storepass x -keypass y), and a password piped in
_STORE_PASS = re.compile(r"(?<=\s)-(?:src|dest)?(?:store|key)pass\s+(?P<val>" + _CLI_VALUE + r")")
_ECHOED = re.compile(r"\b(?:echo|printf)\s+(?:-n\s+)?(?P<val>" + _CLI_VALUE + r")\s*\|\s*(?:sudo\s+)?(?:(?i:docker|podman|helm"
                     r"|oras)\s+(?:registry\s+)?login\b[^\n;|&]{0,200}?--password-stdin|chpasswd"
                     r"|sudo\s+(?:-\w+\s+)*?(?:-\w*S\w*|--stdin)\b|passwd\s+--stdin\b)")


def _masked_value(m: re.Match[str]) -> str:
    """The match with its value ("val") replaced by [SECRET], unless the value names no secret."""
    value = m.group("val")
    if (value.strip("\"'") in {"", "-"} or value.startswith("$") or PLACEHOLDER.match(value.lstrip("\"'"))
            or PLACEHOLDER.match(m.string, m.start("val"))
            or value.strip("\"'").casefold() in NOT_VALUES):
        return m.group(0)  # PGPASSWORD=$PW names another variable
    return m.group(0)[: m.start("val") - m.start()] + SECRET + m.group(0)[m.end("val") - m.start():]


_CLI_GROUPS = ("glued", "flag", "user", "smb", "htpasswd", "tool", "sevenzip", "lftp", "netuse", "openssl")


def _cli(m: re.Match[str]) -> str:
    name = next(g for g in _CLI_GROUPS if m.group(g) is not None)
    value = m.group(name)
    if (value.strip("\"'") in {"", "-"} or value.startswith("-") or PLACEHOLDER.match(m.string, m.start(name))
            or (name == "netuse" and value == "*")):
        return m.group(0)  # "-p" alone, "net use ... *": asked for at a prompt; "--password -" reads it from stdin
    return m.group(0)[: m.start(name) - m.start()] + SECRET


# where each detector here is looked for (`condenser.scan.Hints`)
HINTS = {
    "cli": ("mysql", "mariadb", "sshpass", "redis-cli", "curl", "wget", "smbclient", "htpasswd", "docker login",
            "podman login", "http ", "https ", "mongo", "ldap", "lftp", "sqlcmd", "osql", "isql", "rdesktop",
            "freerdp", "xfreerdp", "wlfreerdp", "az login", "az acr login", "helm registry", "oras login", "net use", "openssl",
            *(f"{start}{word}" for start in WORD_STARTS for word in ("zip ", "unzip ", "7z", "rar ", "unrar ", "bcp "))),
    "store_pass": ("storepass", "keypass"),
    "echoed": ("password-stdin", "chpasswd", "sudo -", "sudo --stdin", "passwd --stdin"),
    "env": ("password=", "passwd=", "pwd=", "pass=", "secret=", "token=", "apikey=", "auth="),
}


def redact_command_lines(text: str, starts: Callable[[str, str], list[int] | None]) -> str:
    """`text` with the passwords on its command lines replaced by [SECRET]; `starts(text, group)`: where a group's
    hints are in `text` as it is now (None: look everywhere; []: nowhere)."""
    if starts(text, "cli") != []:
        text = substitute_at(text, _CLI, _cli, starts(text, "cli"))
    if starts(text, "env") != []:
        text = substitute_at(text, _ENV_SECRET, _masked_value, starts(text, "env"), back=40, ahead=200)
    if starts(text, "store_pass") != []:
        text = substitute_at(text, _STORE_PASS, _masked_value, starts(text, "store_pass"), back=12, ahead=200)
    if starts(text, "echoed") != []:
        text = substitute_at(text, _ECHOED, _masked_value, starts(text, "echoed"), back=300, ahead=40)
    return text
