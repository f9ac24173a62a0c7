"""Read foreign trajectory files (browser-use, AgentLab/BrowserGym, WebCoach reference) into Trajectories.

The conversions themselves are pure (condenser.importers); this module finds and parses the files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from condenser import Trajectory
from condenser.importers import FORMATS, from_agentlab, from_browser_use, from_webcoach_ref
from ems_service.errors import BadRequest, MalformedJSON, NotFound


@dataclass(frozen=True)
class Imported:
    origin: str  # file (and item) it came from
    trajectory: Trajectory | None
    error: str | None = None


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MalformedJSON(f"not valid JSON: {exc}") from exc


def _guard(origin: str, build) -> Imported:  # noqa: ANN001 - a zero-argument callable returning a Trajectory
    """A run, or why it could not be read: a file that is not JSON, or what the converters (condenser.importers,
    which raise ValueError for a log they cannot read) and pydantic found wrong with it."""
    try:
        return Imported(origin, build())
    except (MalformedJSON, ValueError, ValidationError, TypeError, AttributeError, KeyError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Imported(origin, None, message)


def _files(path: Path, pattern: str) -> list[Path]:
    return sorted(path.rglob(pattern)) if path.is_dir() else [path]


def _browser_use(path: Path, task: str | None) -> Iterator[Imported]:
    for file in _files(path, "*.json"):
        yield _guard(str(file), lambda f=file: from_browser_use(_load(f), task=task, task_id=f.stem))


def _agentlab_dir(exp: Path, task: str | None) -> Imported:
    def build() -> Trajectory:
        steps = [_load(p) for p in sorted(exp.glob("step_*.json"), key=lambda p: int(p.stem.split("_")[-1]))]
        summary_path = exp / "summary_info.json"
        summary = _load(summary_path) if summary_path.exists() else None
        return from_agentlab(steps, summary=summary, task=task, task_id=exp.name)

    return _guard(str(exp), build)


def _agentlab(path: Path, task: str | None) -> Iterator[Imported]:
    if path.is_file():
        def build() -> Trajectory:
            data = _load(path)
            if isinstance(data, list):
                return from_agentlab(data, task=task, task_id=path.stem)
            return from_agentlab(data["steps"], summary=data.get("summary_info"), task=task or data.get("task"),
                                 task_id=data.get("task_id") or path.stem, agent=data.get("agent"))

        yield _guard(str(path), build)
        return
    experiments = sorted({p.parent for p in path.rglob("step_*.json")})
    if not experiments and list(path.rglob("step_*.pkl.gz")):
        yield Imported(str(path), None, "AgentLab pickles (step_*.pkl.gz) need agentlab to read; convert them to "
                                        "step_*.json first (see the README)")
    for exp in experiments:
        yield _agentlab_dir(exp, task)


def _webcoach_ref(path: Path) -> Iterator[Imported]:
    for file in _files(path, "*.json"):
        try:
            data = _load(file)
        except MalformedJSON as exc:
            yield Imported(str(file), None, exc.detail)
            continue
        items = data if isinstance(data, list) else [data]
        for i, item in enumerate(items):
            yield _guard(f"{file}[{i}]", lambda it=item: from_webcoach_ref(it))


def read_foreign(fmt: str, path: Path, *, task: str | None = None) -> Iterator[Imported]:
    """Every run found under `path` in format `fmt`, or why one could not be read."""
    if fmt not in FORMATS:
        raise BadRequest(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    if not path.exists():
        raise NotFound(f"{path} does not exist")
    if fmt == "browser-use":
        yield from _browser_use(path, task)
    elif fmt == "agentlab":
        yield from _agentlab(path, task)
    else:
        yield from _webcoach_ref(path)
