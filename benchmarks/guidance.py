"""The coach's own Python in process: the guidance and search stages of a coach call, first sight and warm.

Run: `python -m benchmarks.guidance [--base REV] [--rounds 3]` (`benchmarks/results/guidance.json`). The dev set is
ingested once (SQLite, this checkout's migrations), then `--rounds` times a fresh process of each tree coaches the
scale benchmark's workload (3/5/10-step prefixes of dev runs, `benchmarks.scale.workload`) twice through
`CoachingService.guide`: the first pass sees every stored text for the first time, as a new process or a new
neighbour does (the words' checks remember their answers by text), the second pass is warm. Reported per pass:
the `guidance` stage's p50 and p99 (ms; the risk model, the words, the evidence) and the `search` stage's p50.
With `--base REV`, that revision (a temporary git worktree) takes turns with this checkout, and each answer's
advice, plan, evidence and intervention are compared: `same_answers` says whether the two coached alike.
Medians over the rounds, and this checkout's over the base's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import scale
from benchmarks.common import ROOT
from ems_service import Settings
from ems_service.runtime import build_embedder

PASSES = ("first", "warm")


def _child(work: Path, workload: Path) -> None:
    """One process: coach the workload twice; print the stages' figures and a digest of the answers."""
    from coach import PartialRun
    from ems_service import Runtime

    settings = scale._settings(work)
    rt = Runtime(settings, embedder=build_embedder(settings)).start(background=False)
    try:
        runs = [PartialRun.model_validate(t) for t in json.loads(workload.read_text())]
        out: dict = {}
        digest = hashlib.sha256()
        for name in PASSES:
            guidance, search = [], []
            for run in runs:
                answer, timings = rt.coaching.guide(namespace="default", run=run)
                guidance.append(timings.guidance)
                search.append(timings.search)
                if name == "first":
                    digest.update(json.dumps([answer.intervene, answer.advice, answer.plan,
                                              [e.model_dump(mode="json") for e in answer.evidence]],
                                             default=str).encode())
            cuts = statistics.quantiles(guidance, n=100)
            out[name] = {"guidance_p50_ms": round(statistics.median(guidance), 3), "guidance_p99_ms": round(cuts[98], 3),
                         "search_p50_ms": round(statistics.median(search), 3)}
        out["answers"] = digest.hexdigest()
        out["calls"] = len(runs)
        print(json.dumps(out))
    finally:
        rt.close()


def _turn(tree: Path, work: Path, workload: Path) -> dict:
    # this file runs the turn; the tree's own packages (coach, ems_service, benchmarks) come first on the path
    runner = f"import runpy, sys; sys.argv[1:] = {['--child', str(work), str(workload)]!r}; " \
             f"runpy.run_path({str(Path(__file__).resolve())!r}, run_name='__main__')"
    done = subprocess.run([sys.executable, "-c", runner],
                          cwd=tree, env={**scale._env(work), "PYTHONPATH": str(tree)}, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the turn in {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def run(base: str | None, rounds: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="ems-guidance-"))
    tree = work / "base"
    try:
        if base:
            _git("worktree", "add", "--detach", str(tree), _git("rev-parse", base))
        scale.seed(work, build_embedder(Settings(data_dir=work / "embedder", _env_file=None)))
        _, coach = scale.workload()
        workload = work / "workload.json"
        workload.write_text(json.dumps([c["trajectory"] for c in coach]))
        turns = (("base", tree), ("this", ROOT)) if base else (("this", ROOT),)
        runs: dict[str, list[dict]] = {name: [] for name, _ in turns}
        for r in range(rounds):
            for name, path in turns if r % 2 == 0 else turns[::-1]:
                runs[name].append(_turn(path, work, workload))
                print(f"round {r + 1}/{rounds} {name}: {runs[name][-1]}", file=sys.stderr, flush=True)
        keys = [(p, m) for p in PASSES for m in runs["this"][0][p]]
        medians = {name: {f"{p}_{m}": round(statistics.median(x[p][m] for x in rows), 3) for p, m in keys}
                   for name, rows in runs.items()}
        result = {"this": _git("rev-parse", "--short", "HEAD") + (" + uncommitted changes" if _git(
                      "status", "--porcelain", "--untracked-files=no") else ""),
                  "rounds": rounds, "calls": runs["this"][0]["calls"], "runs": runs, "median": medians}
        if base:
            result["base"] = _git("rev-parse", "--short", base)
            result["this_over_base"] = {k: round(medians["this"][k] / medians["base"][k], 3)
                                        for k in medians["this"]}
            result["same_answers"] = len({x["answers"] for rows in runs.values() for x in rows}) == 1
        return result
    finally:
        if base:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        _child(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(prog="python -m benchmarks.guidance", description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="a revision to measure against, in turns (e.g. HEAD~1)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/guidance.json"))
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    result = run(args.base, args.rounds)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("median", "this_over_base", "same_answers") if k in result}))


if __name__ == "__main__":
    main()
