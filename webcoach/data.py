"""Trajectory files in the canonical JSON Lines format (datasets/trajectories, `webcoach import-from`)."""

from __future__ import annotations

import json
from pathlib import Path

from condenser.importers import from_canonical
from condenser.models import Trajectory


def read_jsonl(path: str | Path) -> list[Trajectory]:
    """Every run of a canonical JSON Lines file (raises ValueError naming the first bad line)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append(from_canonical(json.loads(line)))
            except ValueError as exc:  # json.JSONDecodeError and pydantic's ValidationError are ValueErrors
                raise ValueError(f"{path}:{number}: {str(exc).splitlines()[0]}") from exc
    return out
