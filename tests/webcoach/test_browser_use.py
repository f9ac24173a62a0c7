"""The browser-use hook and importer, on histories written by browser-use's own serializer.

browser-use 0.13.14 cannot be installed beside this service (it pins pydantic==2.13.5, rich==14.3.3, ...), so
the fixtures were written by browser-use's AgentHistoryList.save_to_file in a separate environment
(tests/fixtures/browser_use/make_histories.py) from two real dev runs. The agent below is a stand-in with the
attributes the hook reads (task, history.history, message_manager.state.agent_history_items).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

from condenser.importers import from_browser_use
from ems_service.dataset import to_trajectory
from tests.conftest import dev_records
from webcoach import AsyncClient, Client
from webcoach.browser_use import CoachHook

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "browser_use"


def _history(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def test_importer_maps_every_action_and_the_outcome():
    data = _history("failed")
    traj = from_browser_use(data, task=data["task"])
    source = next(r for r in dev_records("online_mind2web_abp.jsonl") if r["id"] == data["source_id"])
    assert len(traj.steps) == len(source["steps"]) + 1  # + the final done()
    assert traj.outcome.success is False and traj.domain == source["domain"]
    verbs = {"Click at": "click(coordinate_x=", "Type \"": "input(", "Navigate to ": "navigate(",
             "Scroll (": "scroll(", "Press ": "send_keys("}
    mapped = 0
    for src, step in zip(source["steps"], traj.steps, strict=False):
        for prefix, rendered in verbs.items():
            if src["action"].startswith(prefix):
                assert step.action.startswith(rendered), (src["action"], step.action)
                mapped += 1
    assert mapped >= len(source["steps"]) - 3
    assert traj.steps[-1].action.startswith("done(")
    ok = _history("succeeded")
    assert from_browser_use(ok, task=ok["task"]).outcome.success is True


def test_hook_streams_steps_injects_guidance_and_finishes(live_url):
    seed = dev_records("online_mind2web_abp.jsonl") + dev_records("webcanvas.jsonl", 200)
    runs = [to_trajectory(r) for r in seed if r["id"] != _history("failed")["source_id"]]
    with Client(live_url, timeout=120) as ems:
        for i in range(0, len(runs), 100):
            ems.ingest_batch(runs[i : i + 100])
    data = _history("failed")
    agent = SimpleNamespace(task=data["task"], history=SimpleNamespace(history=[]),
                            message_manager=SimpleNamespace(state=SimpleNamespace(agent_history_items=[])))

    async def run() -> tuple[CoachHook, dict, dict]:
        async with AsyncClient(live_url) as ems:
            hook = CoachHook(ems)
            for item in data["history"]:
                await hook.on_step_start(agent)
                agent.history.history.append(item)
                await hook.on_step_end(agent)
            state = await hook.session.client.request("GET", f"/v1/sessions/{hook.session.id}")
            return hook, state, await hook.finish(agent.history)

    hook, state, finished = asyncio.run(run())
    assert state["n_steps"] == len(from_browser_use(data, task=data["task"]).steps)
    injected = agent.message_manager.state.agent_history_items
    assert hook.guidance, "a 27-step failing run with errors-free loops should draw at least one intervention"
    assert [i["system_message"] for i in injected] == [g.system_message.content for g in hook.guidance]
    with Client(live_url) as ems:
        episode = ems.episode(finished["episode_id"])
    assert episode["success"] is False and episode["n_steps"] == state["n_steps"]
