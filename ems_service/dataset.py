"""Reading trajectories files in the canonical JSON Lines format, and where the dev set lies."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from condenser import Trajectory
from condenser.importers import from_canonical

DEV_DATA_VARIABLE = "EMS_DEV_DATA"
DEV_FILES = ("webcanvas.jsonl", "online_mind2web_abp.jsonl", "mind2web_demos.jsonl")


def dev_data_dir() -> Path:
    """The dev trajectories: `$EMS_DEV_DATA`, else datasets/trajectories of this source checkout. They ship in
    the repository with their licences (not in the wheel), so a plain clone has them without a network."""
    override = os.environ.get(DEV_DATA_VARIABLE)
    return Path(override) if override else Path(__file__).resolve().parents[1] / "datasets" / "trajectories"


@dataclass(frozen=True)
class Line:
    number: int
    trajectory: Trajectory | None
    error: str | None
    raw: dict[str, Any] | None = None


def to_trajectory(record: dict[str, Any], *, source: str = "import") -> Trajectory:
    """A canonical JSONL record (or a wire-format trajectory) as a Trajectory."""
    return from_canonical(record, source=source)


def describe_validation_error(exc: ValidationError) -> str:
    """One readable line per problem: `steps.3.action: Field required`."""
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "body"
        parts.append(f"{loc}: {err.get('msg')}")
    more = len(exc.errors()) - 5
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def read_jsonl(path: Path, *, source: str = "import") -> Iterator[Line]:
    """Lines of a trajectories file as Trajectories, or the reason a line was rejected."""
    with open(path, "rb") as fh:
        for number, raw_line in enumerate(fh, start=1):
            if not raw_line.strip():
                continue
            try:
                record = json.loads(raw_line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                yield Line(number, None, f"invalid JSON: {exc}")
                continue
            if not isinstance(record, dict):
                yield Line(number, None, "invalid JSON: a line must hold one JSON object")
                continue
            try:
                yield Line(number, to_trajectory(record, source=source), None, record)
            except ValidationError as exc:
                yield Line(number, None, describe_validation_error(exc))
