"""Foreign trajectory formats -> Trajectory (pure: parsed JSON in, models out; the CLI reads the files).

- browser-use: an AgentHistoryList as written by `AgentHistoryList.save_to_file` / `Agent.save_history`:
  `{"history": [{"model_output": {thinking?, evaluation_previous_goal?, memory?, next_goal?, action: [{name:
  {params}}]}, "result": [{is_done, success, error, extracted_content, ...}], "state": {url, title, ...}}]}`.
  One Step per executed action; the run's outcome is the last `done` result (success or failure), else unknown.
- agentlab: BrowserGym / AgentLab step logs, one dict per StepInfo (`step, obs{goal|goal_object, url,
  last_action_error, ...}, action, reward, terminated, truncated, agent_info{think}`) plus the optional
  `summary_info.json` (`cum_reward`, `err_msg`, `terminated`, `truncated`). BrowserGym reports an action's error
  in the *next* observation (`last_action_error`), so it is moved back onto the step that caused it.
- webcoach-ref: the WebCoach reference repo's condensed episodes (`ems_data.json` items `{data: {meta{goal,
  domain, final_success, total_steps}, summary, embedding, fail_modes | success_workflows}}`). They keep no
  steps: each fail mode / success workflow becomes one step, the summary the observation; the 256-d OpenAI
  embedding is dropped (this service embeds with its own model).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from condenser.models import Outcome, Step, Trajectory

FORMATS = ("browser-use", "agentlab", "webcoach-ref")
_SOURCES = {"self", "seed", "import"}


def from_canonical(record: Mapping[str, Any], *, source: str = "import") -> Trajectory:
    """A line of the canonical JSON Lines format (datasets/trajectories) or a wire-format trajectory.

    The dataset's own `id`, `source` and `labels.task_family` are kept as tags (origin_id, dataset,
    task_family); the run's `source` becomes `source` (import) unless it is one of ours.
    """
    data = dict(record)
    tags = dict(data.get("tags") or {})
    if data.get("source") not in _SOURCES:
        if data.get("source"):
            tags.setdefault("dataset", str(data["source"]))
        data["source"] = source
    if data.get("id") is not None:
        tags.setdefault("origin_id", str(data.pop("id")))
    data.pop("id", None)
    labels = data.pop("labels", None) or {}
    if isinstance(labels, dict) and labels.get("task_family"):
        tags.setdefault("task_family", str(labels["task_family"]))
    data["tags"] = {str(k): str(v) for k, v in tags.items()}
    return Trajectory.model_validate(data)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.strip() or None


def render_browser_use_action(action: Mapping[str, Any]) -> str:
    """`{"click": {"index": 12}}` -> `click(index=12)` (the interacted element is not part of the action)."""
    parts = []
    for name, params in action.items():
        if name == "interacted_element":
            continue
        if isinstance(params, Mapping):
            args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in params.items() if v is not None)
        else:
            args = "" if params is None else json.dumps(params, ensure_ascii=False)
        parts.append(f"{name}({args})")
    return "; ".join(parts) or "unknown()"


def browser_use_steps(item: Mapping[str, Any]) -> list[Step]:
    """The Steps of one AgentHistory item (one per action; a step with no model output is skipped)."""
    output = item.get("model_output") or {}
    actions = output.get("action") or []
    results = item.get("result") or []
    state = item.get("state") or {}
    thought = " ".join(t for t in (_text(output.get("evaluation_previous_goal")), _text(output.get("next_goal")))
                       if t) or _text(output.get("thinking"))
    steps = []
    for i, action in enumerate(actions):
        result = results[i] if i < len(results) else {}
        observation = _text(result.get("extracted_content")) or _text(state.get("title"))
        steps.append(Step(url=_text(state.get("url")), observation=observation, thought=thought,
                          action=render_browser_use_action(action), error=_text(result.get("error"))))
    if not actions and results and any(r.get("error") for r in results):  # the step failed before acting
        error = next(_text(r.get("error")) for r in results if r.get("error"))
        steps.append(Step(url=_text(state.get("url")), action="no_action()", error=error, thought=thought))
    return steps


def from_browser_use(history: Mapping[str, Any], *, task: str | None = None, agent: str = "browser-use",
                     task_id: str | None = None) -> Trajectory:
    items = history.get("history")
    if not isinstance(items, list):
        raise ValueError("not a browser-use AgentHistoryList: no 'history' list")
    task = task or _text(history.get("task"))
    if not task:
        raise ValueError("the browser-use history carries no task: pass it (--task)")
    steps = [step for item in items for step in browser_use_steps(item)]
    if not steps:
        raise ValueError("the browser-use history has no executed actions")
    success = None
    for item in reversed(items):
        done = [r for r in item.get("result") or [] if r.get("is_done")]
        if done:
            success = bool(done[-1].get("success"))
            break
    start_url = next((s.url for s in steps if s.url and not s.url.startswith("about:")), None)
    return Trajectory(task=task, steps=steps, start_url=start_url, agent=agent, task_id=task_id, source="import",
                      outcome=Outcome(success=success, label_source="self_report",
                                      status="done" if success is not None else "unfinished"),
                      tags={"imported_from": "browser-use"})


def _goal(obs: Mapping[str, Any]) -> str | None:
    goal = _text(obs.get("goal"))
    if goal:
        return goal
    parts = obs.get("goal_object") or []
    texts = [p.get("text") for p in parts if isinstance(p, Mapping) and p.get("type") == "text"]
    return _text(" ".join(t for t in texts if t))


def from_agentlab(steps: list[Mapping[str, Any]], *, summary: Mapping[str, Any] | None = None,
                  task: str | None = None, task_id: str | None = None, agent: str | None = None) -> Trajectory:
    steps = sorted(steps, key=lambda s: s.get("step", 0))
    if not steps:
        raise ValueError("no AgentLab steps")
    task = task or next((g for s in steps if (g := _goal(s.get("obs") or {}))), None)
    if not task:
        raise ValueError("no goal in the AgentLab observations: pass the task (--task)")
    out = []
    for i, s in enumerate(steps):
        action = _text(s.get("action"))
        if not action:
            continue  # the final StepInfo holds only the last observation
        obs = s.get("obs") or {}
        nxt = (steps[i + 1].get("obs") or {}) if i + 1 < len(steps) else {}
        info = s.get("agent_info") or {}
        reward = s.get("reward")
        out.append(Step(url=_text(obs.get("url")), action=action, thought=_text(info.get("think")),
                        observation=_text(obs.get("axtree_txt") or obs.get("pruned_html")),
                        error=_text(nxt.get("last_action_error")),
                        reward=float(reward) if isinstance(reward, int | float) else None))
    if not out:
        raise ValueError("the AgentLab log has no actions")
    summary = summary or {}
    reward = summary.get("cum_reward")
    if reward is None:
        rewards = [r for s in steps if isinstance(r := s.get("reward"), int | float)]
        reward = sum(rewards) if rewards else None
    finished = bool(summary.get("terminated") or any(s.get("terminated") for s in steps))
    success = (reward > 0) if isinstance(reward, int | float) and (finished or reward > 0) else None
    status = "error" if summary.get("err_msg") else ("terminated" if finished else "truncated")
    return Trajectory(task=task, steps=out, start_url=out[0].url, agent=agent or "agentlab", task_id=task_id,
                      source="import", outcome=Outcome(success=success, label_source="benchmark", status=status),
                      tags={"imported_from": "agentlab"})


def from_webcoach_ref(record: Mapping[str, Any]) -> Trajectory:
    data = record.get("data", record)
    meta = data.get("meta") or {}
    summary = _text(data.get("summary"))
    task = _text(meta.get("goal")) or summary
    if not task:
        raise ValueError("the condensed episode has neither meta.goal nor a summary")
    steps = []
    for mode in data.get("fail_modes") or []:
        steps.append(Step(action=f"fail_mode({json.dumps(mode.get('name', 'unknown'))})", observation=summary,
                          error=_text(mode.get("description")) or "failed"))
    for flow in data.get("success_workflows") or []:
        steps.append(Step(action=f"workflow({json.dumps(flow.get('name', 'unknown'))})", observation=summary,
                          thought=_text(flow.get("description"))))
    if not steps:
        steps.append(Step(action="recorded_summary()", observation=summary))
    domain = _text(meta.get("domain"))
    success = meta.get("final_success")
    return Trajectory(task=task, steps=steps, domain=domain.removeprefix("www.") if domain else None,
                      agent="webcoach-ref", source="import",
                      outcome=Outcome(success=success if isinstance(success, bool) else None,
                                      label_source="self_report"),
                      tags={"imported_from": "webcoach-ref", "ref_total_steps": str(meta.get("total_steps", ""))})
