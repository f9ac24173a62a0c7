"""Lessons learned from the dev data: how many, how many promoted, and five of them.

Run: `python -m benchmarks.lessons` (prints JSON).
"""

from __future__ import annotations

import json
import sys

from benchmarks.common import DATA, DEV_FILES, fresh_runtime
from ems_service import Embedder
from ems_service.dataset import read_jsonl


def main() -> None:
    rt = fresh_runtime(Embedder())
    rt.settings.coach.refit_every = 0
    for name in DEV_FILES:
        trajs = [ln.trajectory for ln in read_jsonl(DATA / name) if ln.trajectory]
        for start in range(0, len(trajs), 128):
            rt.ingest.ingest(namespace="default", trajectories=trajs[start : start + 128])
    lessons = rt.lessons.list("default")
    learned = [r for r in lessons if r.source == "learned"]
    events = rt.events.page("default", type_=None, since=None, until=None, after_id=None, limit=100_000)
    counts: dict[str, int] = {}
    for e in events:
        counts[e.type] = counts.get(e.type, 0) + 1
    out = {
        "lessons": len(lessons), "learned": len(learned), "seeds": len(lessons) - len(learned),
        "promoted": sum(1 for r in learned if r.category == "best_practice"),
        "events": counts,
        "examples": [{"lesson": r.lesson, "category": r.category, "use_count": r.use_count,
                      "triggered_domains": r.triggered_domains[:5]}
                     for r in sorted(lessons, key=lambda r: -r.use_count)[:5]],
    }
    rt.close()
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
