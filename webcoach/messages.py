"""OpenAI-style message lists and the coach's guidance."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coach.models import Guidance


def append_guidance(messages: list[dict[str, Any]], guidance: Guidance | Mapping[str, Any] | None) -> list[dict]:
    """A new list: `messages` + the coach's system message when it intervenes (else `messages` unchanged).

    The message is the service's own `system_message` ({"role": "system", "content": ...}), written so that
    nothing quoted from memory reads as an instruction. The input list is never modified.
    """
    if guidance is None:
        return list(messages)
    if isinstance(guidance, Mapping):
        guidance = Guidance.model_validate(guidance)
    if not guidance.intervene or guidance.system_message is None:
        return list(messages)
    return [*messages, guidance.system_message.model_dump()]
