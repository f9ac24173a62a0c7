"""Where a served load's CPU goes: py-spy samples `webcoach serve` under load, and each sample is put in the stage
of the request path it was in.

Run: `python -m benchmarks.profile_serve [--load coach16|mixed32] [--seconds 20]`
(`benchmarks/results/profile_<load>.json`; needs py-spy, `pip install py-spy`, and the right to trace a child
process, which root has). The dev set is ingested once (SQLite, FAISS; the query cache off, so every query embeds,
as the other benchmarks run); a `webcoach serve` is warmed by 100 coach requests, then py-spy records it (active
threads only, 200 samples/s) while the load runs: `coach16` is POST /v1/coach from 16 clients, `mixed32` the
32-client mixed load of `benchmarks.load`. A sample's stage is the deepest frame of the project's own stages
(embedder, vector search, database, redaction and condensing, coaching, lessons, routes); a sample in none of them
is put in the deepest framework it shows (uvicorn, starlette and FastAPI, pydantic), else `other`. Shares are of
all samples; `top` lists the functions the samples were in (self time).
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
import threading
import time
from collections import Counter
from pathlib import Path

from benchmarks import load, scale
from ems_service import Settings
from ems_service.embedded import ServeProcess
from ems_service.runtime import build_embedder

# (fragment of a frame's file, stage): the project's stages, matched on the deepest frame
STAGES = (
    ("ems_service/onnx_embedder/", "embedder: model and tokenizer"),
    ("ems_service/embeddings.py", "embedder: model and tokenizer"),
    ("onnxruntime", "embedder: model and tokenizer"),
    ("tokenizers", "embedder: model and tokenizer"),
    ("ems_service/batcher.py", "embedder: batching"),
    ("ems_service/index/", "vector search"),
    ("faiss", "vector search"),
    ("ems_service/repositories/", "database"),
    ("sqlalchemy", "database"),
    ("sqlite3", "database"),
    ("condenser/redact", "redaction"),
    ("condenser/credentials", "redaction"),
    ("condenser/personal", "redaction"),
    ("condenser/scan", "redaction"),
    ("condenser/", "condensing (but redaction)"),
    ("ems_service/lessons", "lessons"),
    ("coach/", "coaching: retrieval, risk, words"),
    ("ems_service/coaching", "coaching: retrieval, risk, words"),
    ("ems_service/retrieval", "coaching: retrieval, risk, words"),
    ("ems_service/sessions", "sessions"),
    ("ems_service/ingest", "ingest (around condensing and embedding)"),
    ("ems_service/routes/", "route handlers"),
    ("ems_service/middleware", "middleware (keys, body checks)"),
)
# frameworks: a sample in no stage above goes to the deepest of these
FRAMEWORKS = (
    ("uvicorn", "HTTP server (uvicorn, httptools)"),
    ("httptools", "HTTP server (uvicorn, httptools)"),
    ("h11", "HTTP server (uvicorn, httptools)"),
    ("asyncio", "event loop"),
    ("uvloop", "event loop"),
    ("starlette", "starlette and FastAPI"),
    ("fastapi", "starlette and FastAPI"),
    ("anyio", "starlette and FastAPI"),
    ("pydantic", "pydantic (validation, serialization)"),
    ("json", "JSON"),
    ("orjson", "JSON"),
)


def _file(frame: str) -> str:
    """`function (path/to/file.py:12)` -> the path."""
    inner = frame.rsplit("(", 1)[-1]
    return inner.rsplit(":", 1)[0]


def stage_of(frames: list[str]) -> str:
    """The stage of one stack (root first)."""
    files = [_file(f) for f in frames]
    for table in (STAGES, FRAMEWORKS):
        for path in reversed(files):
            for fragment, stage in table:
                if fragment in path:
                    return stage
    return "other"


def summarize(raw: str, *, top: int = 25) -> dict:
    """Stage shares and the top self-time functions of py-spy's `raw` (collapsed stacks) output."""
    stages: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [f for f in stack.split(";") if "(" in f]  # drop the process and thread labels
        if not frames:
            continue
        total += n
        stages[stage_of(frames)] += n
        leaves[frames[-1]] += n
    share = {stage: round(n / total, 3) for stage, n in stages.most_common()} if total else {}
    return {"samples": total, "stage_share": share,
            "top_self": [{"function": f, "share": round(n / total, 3)} for f, n in leaves.most_common(top)]}


def _drive(url: str, name: str, coach: list[dict], seconds: float) -> dict:
    if name == "coach16":
        until = time.perf_counter() + seconds
        rates: list[float] = []
        while time.perf_counter() < until:  # blocks of 400 requests until the time is up
            rates.append(asyncio.run(scale._concurrent(url, "/v1/coach", coach, 16, 400))["throughput_rps"])
        return {"requests": 400 * len(rates), "throughput_rps": statistics.median(rates)}
    result = asyncio.run(load._load(url, load._records(), 32, seconds, 0, "profile"))
    return {"calls": result["calls"], "throughput_rps": result["throughput_rps"], "p99_ms": result["all"]["p99_ms"]}


def run(name: str, seconds: float, rate: int = 200, *, keep_raw: Path | None = None, gil: bool = False) -> dict:
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        raise SystemExit("py-spy is not installed: pip install py-spy")
    work = Path(tempfile.mkdtemp(prefix="ems-profile-"))
    try:
        scale.seed(work, build_embedder(Settings(data_dir=work / "embedder", _env_file=None)))
        _, coach = scale.workload()
        with ServeProcess(scale._env(work)) as server:
            server.wait_ready(600)
            asyncio.run(scale._concurrent(server.url, "/v1/coach", coach, 4, 100))
            raw_path = work / "profile.txt"
            record = subprocess.Popen([spy, "record", "--pid", str(server.proc.pid), "--rate", str(rate),
                                       "--duration", str(int(seconds)), "--format", "raw", "--nonblocking",
                                       "--output", str(raw_path), *(["--gil"] if gil else [])], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True)
            time.sleep(1.0)  # py-spy attaches
            driven: dict = {}
            driver = threading.Thread(target=lambda: driven.update(_drive(server.url, name, coach, seconds - 1)))
            driver.start()
            driver.join()
            _, err = record.communicate(timeout=seconds + 120)
            if record.returncode != 0 or not raw_path.exists():
                raise SystemExit(f"py-spy failed: {err.strip()[-400:]}")
            summary = summarize(raw_path.read_text())
            if keep_raw is not None:
                shutil.copyfile(raw_path, keep_raw)
        return {"load": name, "seconds": seconds, "rate_hz": rate, "gil_only": gil, "driven": driven, **summary,
                "data": "the three dev files ingested (SQLite, FAISS); query cache off",
                "note": "py-spy's --nonblocking samples without stopping the server; the benchmark's own client "
                        "shares the two cores"}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", choices=("coach16", "mixed32"), default="coach16")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--gil", action="store_true", help="sample only the thread holding the GIL (the "
                        "Python work; the model's and FAISS's native threads run without it)")
    parser.add_argument("--keep-raw", type=Path, default=None, help="also write py-spy's collapsed stacks here")
    args = parser.parse_args()
    if args.seconds < 5:
        parser.error("--seconds must be at least 5")
    result = run(args.load, args.seconds, keep_raw=args.keep_raw, gil=args.gil)
    out = args.out or Path(f"benchmarks/results/profile_{args.load}{'_gil' if args.gil else ''}.json")
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
