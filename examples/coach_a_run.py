"""Coach a web agent with the SDK, end to end, against a running service.

    make serve                                   # in another terminal (or set EMS_URL / EMS_API_KEY)
    .venv/bin/python examples/coach_a_run.py    # --memory 100: store only the first 100 runs (faster)

1. Memory: stores the webcanvas dev runs (datasets/trajectories) but the one replayed below; a second run of the
   script finds them deduplicated.
2. A live session: replays a real failing run step by step, as an agent's loop would, and prints what the coach
   says and the system message the agent's next LLM call would carry.
3. Finishes the session: the run becomes an episode other agents learn from.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from webcoach import Client, Trajectory, append_guidance, read_jsonl

DATA = Path(os.environ.get("EMS_DEV_DATA") or Path(__file__).resolve().parents[1] / "datasets" / "trajectories")


def pick_failing_run(runs: list[Trajectory]) -> Trajectory:
    """A failing run that repeats an action (a loop an agent can be warned about)."""
    for run in runs:
        actions = [str(step.action) for step in run.steps]
        if run.outcome.success is False and 8 <= len(actions) <= 20 and len(set(actions)) < len(actions) - 2:
            return run
    raise SystemExit("no failing run with a repeated action in the dev set")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory", type=int, default=None, help="store only this many runs (default: all)")
    args = parser.parse_args()
    url = os.environ.get("EMS_URL", "http://127.0.0.1:8080")
    runs = read_jsonl(DATA / "webcanvas.jsonl")
    replay = pick_failing_run(runs)
    memory = [run for run in runs if run.task != replay.task][: args.memory]

    with Client(url, api_key=os.environ.get("EMS_API_KEY"), timeout=120) as ems:
        results = [r for i in range(0, len(memory), 200) for r in ems.ingest_batch(memory[i : i + 200])]
        fresh = sum(1 for r in results if r.get("id") and not r.get("deduplicated"))
        print(f"memory: {fresh} runs stored, {len(results) - fresh} already there; {ems.stats()['episodes']} episodes")

        print(f"\nagent task: {replay.task}\nsite: {replay.start_url or replay.domain}")
        session = ems.start_session(task=replay.task, start_url=replay.start_url, agent="examples/coach_a_run.py")
        messages: list[dict] = [{"role": "system", "content": "You are a web agent."}]
        for number, step in enumerate(replay.steps, 1):
            guidance = session.add_steps([step])  # the agent acted; the coach sees the run so far
            if guidance is None:
                print(f"step {number:2d}: {str(step.action)[:60]:60s}  coach: silent")
                continue
            print(f"step {number:2d}: {str(step.action)[:60]:60s}  coach: intervenes, risk {guidance.failure_risk:.2f}")
            messages = append_guidance(messages, guidance)  # what the agent's next LLM call carries
            print("         system message: " + messages[-1]["content"].replace("\n", "\n         "))
        coaching = session.coaching()
        print(f"\nafter {len(replay.steps)} steps: risk {coaching.failure_risk:.2f}, intervene {coaching.intervene}")
        finished = session.finish(success=False)
        print(f"session finished: episode {finished['episode_id']} (searchable now)")
        hits = ems.search(replay.task, k=3)
        print("search for its task, top hit: episode", hits[0]["id"], "similarity", round(hits[0]["similarity"], 3))


if __name__ == "__main__":
    sys.exit(main())
