"""The middleware's check of a request body for a NUL or a lone surrogate (`ems_service.middleware.suspect`) against
the exact pattern alone, on the dev runs as agents post them (one run a body, and batches of 64).

Run: `python -m benchmarks.body_checks` (prints JSON: median µs a body over 7 repeats).
"""

from __future__ import annotations

import json
import statistics
import time

from benchmarks.common import DATA, DEV_FILES
from ems_service.dataset import read_jsonl
from ems_service.middleware import _SUSPECT, suspect


def _per_body(check, bodies: list[bytes], repeats: int = 7) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for body in bodies:
            check(body)
        times.append((time.perf_counter() - t) / len(bodies) * 1e6)
    return round(statistics.median(times), 1)


def main() -> None:
    runs = [ln.trajectory.model_dump(mode="json") for f in DEV_FILES for ln in read_jsonl(DATA / f) if ln.trajectory]
    single = [json.dumps({"run": r}).encode() for r in runs]
    batches = [json.dumps({"episodes": runs[i:i + 64]}).encode() for i in range(0, len(runs), 64)]
    out = {}
    for name, bodies in (("one run", single), ("batch of 64", batches)):
        out[name] = {"bodies": len(bodies), "mean_kb": round(sum(map(len, bodies)) / len(bodies) / 1024, 1),
                     "exact_pattern_us": _per_body(lambda b: _SUSPECT.search(b) is not None, bodies),
                     "with_prefilter_us": _per_body(suspect, bodies)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
