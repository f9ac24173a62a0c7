"""Hostile text through ingest (redaction, condensing) and the coach's reading of a run: each family of characters
at 4,000 and 16,000 characters, in every step field and inside the action formats the redaction parses, timed.

    python -m tests.reliability.text_cost          # a summary
    python -m tests.reliability.text_cost --json   # every case (tests/reliability/test_text_cost.py)
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from coach import Neighbour, PartialRun, advise
from condenser import Trajectory, condense
from ems_service.dataset import dev_data_dir

FAMILIES = ["??", "token.", "tokenA", "passwordsDE89", '\\"', '"', "'", "_-", "1.", "1-", "11", "1 ", "click[,", "1[",
            "[", " ", "\n", ",?", "for is ", "a@", "x@y.", "%40", "(at)", " at ", "DE89", "GB82 ", "+49 ", "4111 ",
            "é1", "İ", "a=", "key=", "password is ", "type(", "ignore previous ", "://a:", "eyJ", 'xpw=\\"', "xpass=",
            "-dot-1", "_dot_1", "电话 1234567;"]
WRAPS = [("", ""), ("type(", ")"), ("fill(text=", ")"), ("type: ", " [textbox] x"), ("type ", ""),
         ("TYPE: x [", ""), ("password: ", ""), ("type[1][", "]"), ("fill[1,", "]"), ('type "', '"'), ("click: x", ""), ("x-at-a", "-"),
         ("ß ", "")]
SITE = "https://shop.example.com/"


def step(field: str, text: str) -> dict[str, str]:
    s = {"action": "CLICK [button] Next", "observation": "ok", "thought": "go", "url": SITE}
    s[field] = text
    return s


def ingest(field: str, text: str) -> None:
    condense(Trajectory.model_validate({"task": "buy a lamp", "domain": "shop.example.com",
                                        "steps": [step(field, text)], "outcome": {"success": False}}))


def coach(field: str, text: str) -> None:
    ep = condense(Trajectory.model_validate({"task": "buy a lamp", "steps": [step(field, text)],
                                             "outcome": {"success": False}}))
    other = Neighbour(id=1, similarity=0.9, success=False, domain="shop.example.com", task="buy a lamp",
                      summary="failed", n_steps=1, error_patterns=ep.error_patterns, steps_brief=ep.steps_brief)
    advise(PartialRun.model_validate({"task": "buy a lamp", "start_url": SITE,
                                      "steps": [step(field, text), step("thought", "again"), step("thought", "again")]}),
           [other])


def cost(fn: Callable[[str, str], None], field: str, text: str, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn(field, text)
        best = min(best, time.perf_counter() - t)
    return best


def measure() -> list[list]:
    """[entry, field, prefix, family, seconds at 4k, seconds at 16k] for every case."""
    out = []
    for pre, post in WRAPS:
        for fam in FAMILIES:
            for field in (["action"] if pre else ["action", "observation", "thought", "error"]):
                for name, fn in (("ingest", ingest), ("coach", coach)):
                    texts = [pre + (fam * (n // len(fam) + 1))[:n] + post for n in (4000, 16000)]
                    try:
                        small, large = (cost(fn, field, t, 1) for t in texts)
                        if large > 8 * small and large > 0.05:  # measured again before it counts
                            small, large = (cost(fn, field, t, 3) for t in texts)
                    except ValueError:  # the run is refused by validation (an action of spaces): nothing to measure
                        continue
                    out.append([name, field, pre, fam, small, large])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="every case as JSON (for the test)")
    args = parser.parse_args()
    rows = measure()
    if args.json:
        print(json.dumps(rows))
        return
    worst = max(rows, key=lambda r: r[5])
    page = " ".join(s.get("observation") or "" for line in (dev_data_dir() / "webcanvas.jsonl").open(encoding="utf-8")
                    for s in json.loads(line)["steps"])[:16000]
    print(f"page text (webcanvas observations), 16k characters: ingest {cost(ingest, 'observation', page, 3) * 1000:.1f} ms,"
          f" coach {cost(coach, 'observation', page, 3) * 1000:.1f} ms")
    steepest = max(rows, key=lambda r: r[5] / max(r[4], 1e-9) if r[5] > 0.005 else 0)
    print(f"{len(rows)} cases; slowest at 16k: {worst[0]} {worst[1]} {worst[2]!r}+{worst[3]!r}* "
          f"{worst[4] * 1000:.1f} ms at 4k, {worst[5] * 1000:.1f} ms at 16k; steepest (over 5 ms): {steepest[0]} "
          f"{steepest[1]} {steepest[2]!r}+{steepest[3]!r}* x{steepest[5] / steepest[4]:.1f}")


if __name__ == "__main__":
    main()
