"""An agent's MCP session against a running service, printed as a transcript (the official `mcp` SDK's client over
streamable HTTP at /mcp).

    make serve                                     # in another terminal (or set EMS_URL / EMS_API_KEY)
    .venv/bin/python examples/mcp_session.py      # --memory 100: store only the first 100 runs first

1. Memory: stores webcanvas dev runs (datasets/trajectories) with the `add_episode` tool, but the one replayed.
2. A live run: `start_session`, then `add_steps` step by step from a real failing run, printing the coach's advice
   when it speaks; `finish_session`; then `search_memory` finds the new episode.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from webcoach import Trajectory, read_jsonl

DATA = Path(os.environ.get("EMS_DEV_DATA") or Path(__file__).resolve().parents[1] / "datasets" / "trajectories")


def pick_failing_run(runs: list[Trajectory]) -> Trajectory:
    """A failing run that repeats an action (a loop an agent can be warned about)."""
    for run in runs:
        actions = [str(step.action) for step in run.steps]
        if run.outcome.success is False and 8 <= len(actions) <= 20 and len(set(actions)) < len(actions) - 2:
            return run
    raise SystemExit("no failing run with a repeated action in the dev set")


async def tool(client: Client, name: str, show: bool = True, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    if result.is_error:
        raise SystemExit(f"{name}: {result.content[0].text}")
    if show:
        shown = {k: (v if not isinstance(v, list) else f"[{len(v)} items]") for k, v in arguments.items()
                 if v is not None}
        print(f"-> {name}({json.dumps(shown)[1:-1]})")
    return result.structured_content


async def main(url: str, key: str | None, memory: int | None) -> None:
    runs = read_jsonl(DATA / "webcanvas.jsonl")
    replay = pick_failing_run(runs)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (httpx2.AsyncClient(headers=headers, timeout=60) as http,
                Client(streamable_http_client(url.rstrip("/") + "/mcp", http_client=http)) as client):
        tools = (await client.list_tools()).tools
        print("tools:", ", ".join(t.name for t in tools))
        stored = 0
        for run in [r for r in runs if r is not replay][:memory]:
            await tool(client, "add_episode", False, task=run.task, start_url=run.start_url,
                       steps=[s.model_dump(mode="json", exclude_none=True) for s in run.steps],
                       success=run.outcome.success)
            stored += 1
        print(f"memory: {stored} runs sent with add_episode")
        session = await tool(client, "start_session", task=replay.task, start_url=replay.start_url)
        print(f"<- session {session['id']} ({session['status']})")
        for i, step in enumerate(replay.steps, start=1):
            added = await tool(client, "add_steps", i == 1, session_id=session["id"],
                               steps=[step.model_dump(mode="json", exclude_none=True)])
            guidance = added.get("guidance")
            if guidance:
                print(f"<- after step {i}: risk {guidance['failure_risk']:.2f}, advice: {guidance['advice']}")
        print(f"   ({len(replay.steps)} steps sent; the coach spoke only where shown)")
        finished = await tool(client, "finish_session", session_id=session["id"], success=False)
        print(f"<- episode {finished['episode_id']} (deduplicated: {finished['deduplicated']})")
        found = await tool(client, "search_memory", text=replay.task, k=3)
        for hit in found["results"]:
            print(f"<- {hit['id']}  {hit['similarity']:.3f}  {hit['domain']}  success={hit['success']}  "
                  f"{hit['task'][:60]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory", type=int, default=None, help="store only this many runs first (default: all)")
    args = parser.parse_args()
    asyncio.run(main(os.environ.get("EMS_URL", "http://127.0.0.1:8080"), os.environ.get("EMS_API_KEY"),
                     args.memory))
