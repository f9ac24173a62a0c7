"""What the agent's own notes (its thoughts) say about the run: that it is stuck, or that the task is done.

Read, never quoted: the words the agent reads back are the coach's own (`coach.runstate`).
"""

from __future__ import annotations

import re

from coach.words import clean

NOTE_CHARS = 5000  # what of a note is read: a page can make the agent write megabytes
STUCK = re.compile(
    r"\b(?:still (?:not|no|on|the same|unable|can't|cannot|doesn't|didn't|haven't|isn't|aren't|appears?|shows?"
    r"|empty|loading|nothing|missing)|unable to|cannot find|can't find|couldn't find|could not find|not working"
    r"|didn't (?:work|open|load|change|respond)|did not (?:work|open|load|change)|doesn't (?:seem|appear|open|work)"
    r"|(?:aren't|isn't|not) (?:showing|loading|appearing|displayed|visible|responding)|nothing happened|no change"
    r"|stuck|same page|again|keeps? (?:failing|showing|returning)|not responding|appears? (?:empty|blank))\b", re.I)

_DONE = re.compile(
    r"\b(?:(?:task|goal|objective|request)(?: \w+){0,6} (?:is|has been|was|have been) (?:now |already |successfully )*"
    r"(?:complete[d]?|accomplished|achieved|fulfilled|done|finished|met)"
    r"|no (?:further|more|additional) (?:actions?|steps?|interactions?|navigation) (?:is |are )?"
    r"(?:required|needed|necessary)"
    r"|(?:has|have) already been (?:found|completed|accomplished|achieved|provided|reported))\b", re.I)
# "once the task is complete", "before the task is done", "to ensure the task is finished": not a claim
_NOT_A_CLAIM = re.compile(r"\b(?:not|n't|once|until|before|when|whenever|if|unless|ensure|sure|whether|after|to be"
                          r"|can be|will be|would be|should be)\W+(?:\w+\W+){0,5}$", re.I)


# The note says the page moved on: new content came into view, the agent goes on through a list, a carousel or a
# page ("COVEN AHRI appeared", "I can see the fourth post", "Let me continue scrolling"). Read only where the run
# itself does not say whether the page changed (no URL, no page text), and only beside notes that differ.
_PROGRESS = re.compile(
    r"\b(?:(?:continue|keep|continuing|keeps) (?:scrolling|clicking|browsing|paging|reading|going through|moving)"
    r"|(?:has|have|had|just) (?:now )?(?:appeared|loaded|expanded|opened|updated|advanced|moved to)|appeared"
    r"|now (?:i can )?(?:see|shows?|showing|displays?|displaying)|i can (?:now )?see (?:the|a|an|more|new|\d)"
    r"|new (?:\w+ ){0,2}(?:items?|results?|content|posts?|products?|cards?|options?|entries|images?|sections?|slides?)"
    r"|(?:the )?(?:next|another|first|second|third|fourth|fifth|sixth|\d+(?:st|nd|rd|th)) (?:\w+ ){0,2}(?:skin|item"
    r"|card|slide|image|post|product|result|set|section|row|page)s?|more (?:\w+ ){0,2}(?:items?|results?|posts?"
    r"|products?|cards?|options?|content|details)|scrolled (?:down |further )?(?:to|past)|revealed|getting close"
    r"|(?:scroll|scrolling) (?:down |further )?to (?:see|find|view|load|collect|gather) more"
    r"|i can see (?:[\w'’]+ ){0,3}(?:posts?|items?|results?|list(?:ings?)?|products?|entries|videos?|tracks?))\b",
    re.I)


def says_progress(thought: str | None) -> bool:
    """The note says new content came into view or the agent is going through a list (and not that it is stuck)."""
    if not thought:
        return False
    text = clean(thought[:NOTE_CHARS])
    return _PROGRESS.search(text) is not None and STUCK.search(text) is None


def says_stuck(thought: str | None) -> bool:
    return bool(thought and STUCK.search(clean(thought[:NOTE_CHARS])))


def says_done(thought: str | None) -> bool:
    """The note claims the task is complete ("the task has been completed", "no further action is required")."""
    if not thought:
        return False
    text = clean(thought[:NOTE_CHARS])
    return any(not _NOT_A_CLAIM.search(text[max(0, m.start() - 60):m.start()]) for m in _DONE.finditer(text))
