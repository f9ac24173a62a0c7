"""The service over HTTP, this checkout against an earlier revision, served in turn on one database.

Run: `python -m benchmarks.ab_serve --base REV [--rounds 3]` (`benchmarks/results/ab_serve.json`). On this VM two
runs of one benchmark on the same code differ by 20-40%, so a change is measured against its base in the same run:
the base revision is checked out into a temporary git worktree, the dev set is ingested once (SQLite, this
checkout's migrations: the base must have the same ones), and then, `--rounds` times, a `webcoach serve` of the base
and one of this checkout (each imports its own tree: PYTHONPATH) take turns. Each serves, after 100 coach requests
from 4 clients to warm it: POST /v1/coach from 1 client (300 requests, p50), POST /v1/search from 1 client (300,
p50) and POST /v1/coach from 16 clients (800, requests/s); with `--mixed-seconds S`, then the 32-client mixed load of
`benchmarks.load` for S seconds (p99 of every call, calls/s; it ingests runs, so the two take turns in alternating
order). The query cache is off (every query embedded). Medians over the rounds, and this checkout's over the base's. `--base-env NAME=VALUE` (repeatable) sets a variable for the
base's server only: e.g. `EMS_EMBEDDER__ONNX_PATH` to serve the base with a graph exported by its own code (both
trees otherwise load the graphs installed in this environment).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import load, scale
from benchmarks.common import ROOT
from ems_service import Settings
from ems_service.embedded import ServeProcess
from ems_service.runtime import build_embedder

MEASURES = ("coach_p50_ms_1", "search_p50_ms_1", "coach_rps_16")
MIXED = ("mixed_p99_ms_32", "mixed_calls_s_32")


def _serve(work: Path, tree: Path, coach: list[dict], search: list[dict], extra: dict[str, str], *,
           mixed_seconds: float = 0, seed: int = 0, tag: str = "") -> dict:
    env = {**scale._env(work), "PYTHONPATH": str(tree), **extra}
    with ServeProcess(env) as server:
        server.wait_ready(600)
        asyncio.run(scale._concurrent(server.url, "/v1/coach", coach, 4, 100))
        coach_1 = asyncio.run(scale._concurrent(server.url, "/v1/coach", coach, 1, 300))
        search_1 = asyncio.run(scale._concurrent(server.url, "/v1/search", search, 1, 300))
        coach_16 = asyncio.run(scale._concurrent(server.url, "/v1/coach", coach, 16, 800))
        out = {"coach_p50_ms_1": coach_1["p50_ms"], "search_p50_ms_1": search_1["p50_ms"],
               "coach_rps_16": coach_16["throughput_rps"],
               "errors": coach_1["errors"] + search_1["errors"] + coach_16["errors"]}
        if mixed_seconds:
            # the same requests in both turns of a round (`seed`), each turn's runs its own (`tag`): the second turn
            # would otherwise find the first one's runs stored and skip their embedding (deduplicated)
            mixed = asyncio.run(load._load(server.url, load._records(), 32, mixed_seconds, seed, tag))
            out |= {"mixed_p99_ms_32": mixed["all"]["p99_ms"], "mixed_calls_s_32": mixed["throughput_rps"]}
            out["errors"] += mixed["total_errors"]
    return out


def run(base: str, rounds: int, base_env: dict[str, str] | None = None, *, mixed_seconds: float = 0) -> dict:
    rev = subprocess.run(["git", "rev-parse", "--short", base], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout.strip())
    work = Path(tempfile.mkdtemp(prefix="ems-ab-"))
    tree = work / "base"
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), rev], cwd=ROOT, check=True, capture_output=True)
    try:
        scale.seed(work, build_embedder(Settings(data_dir=work / "embedder", _env_file=None)))
        texts, coach = scale.workload()
        search = [{"text": t, "k": 5} for t in texts]
        runs: dict[str, list[dict]] = {"base": [], "this": []}
        measures = MEASURES + (MIXED if mixed_seconds else ())
        turns = (("base", tree), ("this", ROOT))
        for r in range(rounds):
            # the mixed load ingests runs: the memory grows turn by turn, so the order alternates between rounds
            for name, path in turns if r % 2 == 0 else turns[::-1]:
                runs[name].append(_serve(work, path, coach, search, (base_env or {}) if name == "base" else {},
                                         mixed_seconds=mixed_seconds, seed=r, tag=f"{name}{r} "))
                print(f"round {r + 1}/{rounds} {name}: {runs[name][-1]}", file=sys.stderr, flush=True)
        medians = {name: {m: round(statistics.median(x[m] for x in rows), 3) for m in measures}
                   for name, rows in runs.items()}
        return {"base": rev, "base_env": base_env or {}, "this": f"{head}{' + uncommitted changes' if dirty else ''}",
                "rounds": rounds, "mixed_seconds": mixed_seconds,
                "data": "the three dev files ingested (SQLite, FAISS), query cache off", "runs": runs,
                "median": medians,
                "this_over_base": {m: round(medians["this"][m] / medians["base"][m], 3) for m in measures}}
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the revision to measure against (e.g. HEAD~1)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--base-env", action="append", default=[], metavar="NAME=VALUE",
                        help="an environment variable for the base's server only (repeatable)")
    parser.add_argument("--mixed-seconds", type=float, default=0,
                        help="also run the 32-client mixed load (benchmarks.load) this long in each turn")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/ab_serve.json"))
    args = parser.parse_args()
    if args.rounds < 1 or not 0 <= args.mixed_seconds < float("inf"):
        parser.error("--rounds must be at least 1 and --mixed-seconds at least 0")
    base_env = {}
    for item in args.base_env:
        name, sep, value = item.partition("=")
        if not sep or not name:
            parser.error(f"--base-env takes NAME=VALUE, not {item!r}")
        base_env[name] = value
    result = run(args.base, args.rounds, base_env, mixed_seconds=args.mixed_seconds)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({"median": result["median"], "this_over_base": result["this_over_base"]}))


if __name__ == "__main__":
    main()
