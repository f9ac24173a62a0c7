"""browser-use integration: stream an Agent's steps to a coaching session and inject the coach's guidance.

    from webcoach import AsyncClient
    from webcoach.browser_use import CoachHook

    async with AsyncClient("http://127.0.0.1:8080") as ems:
        hook = CoachHook(ems)
        history = await agent.run(on_step_start=hook.on_step_start, on_step_end=hook.on_step_end)
        await hook.finish(history)

After each step the new AgentHistory items are mapped to Steps (condenser.importers.browser_use_steps) and
appended to the session. When the coach intervenes, its system message is added to the agent's history
through the public message-manager state (`agent.message_manager.state.agent_history_items`, as a
`HistoryItem(system_message=...)`: what browser-use itself does for follow-up tasks), so the LLM reads it in
its next step. Nothing here imports browser-use unless a message is injected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coach.models import Guidance
from condenser.importers import browser_use_steps, from_browser_use
from webcoach.client import AsyncClient, AsyncSession


def _as_dict(item: Any) -> Mapping[str, Any]:
    if isinstance(item, Mapping):
        return item
    return item.model_dump()  # AgentHistory / AgentHistoryList have their own JSON-safe model_dump


def _history_items(source: Any) -> list[Any]:
    """The AgentHistory items of an Agent, an AgentHistoryList, or their dict form."""
    history = getattr(source, "history", source)  # Agent.history is an AgentHistoryList
    if isinstance(history, Mapping):
        return list(history.get("history", []))
    items = getattr(history, "history", history)
    return list(items)


class CoachHook:
    """Per-step callbacks for `Agent.run(on_step_start=..., on_step_end=...)`."""

    def __init__(self, client: AsyncClient, *, task: str | None = None, agent_name: str = "browser-use",
                 model: str | None = None, inject: bool = True) -> None:
        self.client, self.task, self.agent_name, self.model, self.inject_messages = client, task, agent_name, model, inject
        self.session: AsyncSession | None = None
        self.guidance: list[Guidance] = []  # every intervention, in order
        self._seen = 0

    async def _ensure_session(self, agent: Any) -> AsyncSession:
        if self.session is None:
            task = self.task or getattr(agent, "task", None)
            if not task:
                raise ValueError("CoachHook needs the task (pass task=... or use it with a browser-use Agent)")
            self.task = task
            fields = {"task": task, "agent": self.agent_name, "model": self.model}
            self.session = await self.client.start_session(None, **{k: v for k, v in fields.items() if v})
        return self.session

    async def on_step_start(self, agent: Any) -> None:
        await self._ensure_session(agent)

    async def on_step_end(self, agent: Any) -> Guidance | None:
        """Send the steps this agent step produced; inject and return the guidance when the coach intervenes."""
        session = await self._ensure_session(agent)
        items = _history_items(agent)
        fresh, self._seen = items[self._seen :], len(items)
        steps = [step for item in fresh for step in browser_use_steps(_as_dict(item))]
        if not steps:
            return None
        guidance = await session.add_steps(steps)
        if guidance is not None:
            self.guidance.append(guidance)
            if self.inject_messages:
                self.inject(agent, guidance)
        return guidance

    @staticmethod
    def inject(agent: Any, guidance: Guidance) -> bool:
        """Add the guidance's system message to the agent's message history; False if there is nowhere to."""
        if guidance.system_message is None:
            return False
        state = getattr(getattr(agent, "message_manager", None), "state", None)
        items = getattr(state, "agent_history_items", None)
        if items is None:
            return False
        try:
            from browser_use.agent.message_manager.views import HistoryItem
        except ImportError:  # a recorded agent in tests, or another browser-use layout: keep the plain text
            items.append({"system_message": guidance.system_message.content})
        else:
            items.append(HistoryItem(system_message=guidance.system_message.content))
        return True

    async def finish(self, history: Any) -> dict[str, Any]:
        """Finish the session with the run's outcome (the last `done` result of the history)."""
        if self.session is None:
            raise ValueError("the session was never started (no step ran)")
        data = {"history": [_as_dict(item) for item in _history_items(history)]}
        outcome = from_browser_use(data, task=self.task).outcome if data["history"] else None
        success = outcome.success if outcome else None
        return await self.session.finish(success, status=outcome.status if outcome else "unfinished")
