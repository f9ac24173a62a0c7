"""Where the CPU of a coaching load goes: the server's process against the benchmark's client, and how much of the
server's is the embedder.

Run: `python -m benchmarks.cpu_split [--requests 800] [--clients 16]` (`benchmarks/results/cpu_split.json`; Linux:
it reads /proc). The dev set is ingested once (SQLite, FAISS); then a `webcoach serve` per variant is warmed by one
pass over every coach body from 4 clients, and POST /v1/coach from `--clients` clients (`--requests` in all) is measured:
requests/s, the CPU seconds of the server's process (user and system; its event-loop thread apart) and of this
process (the client), each per request, and the share of the machine's cores the two kept busy. Variants: every
query embedded (the query cache off, as the other benchmarks run), and the query cache on, so that after the warm-up
no request embeds: the difference per request is the embedder's share.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks import scale
from ems_service import Settings
from ems_service.embedded import ServeProcess
from ems_service.runtime import build_embedder

VARIANTS = {"every query embedded": {}, "query cache on": {"EMS_EMBEDDER__QUERY_CACHE": "4096"}}
TICK = os.sysconf("SC_CLK_TCK")


def _cpu(stat_path: str) -> tuple[float, float]:
    """(user, system) CPU seconds from a /proc stat file."""
    fields = Path(stat_path).read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICK, int(fields[12]) / TICK


def _client_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(work: Path, coach: list[dict], env: dict[str, str], *, clients: int, requests: int) -> dict:
    with ServeProcess({**scale._env(work), **env}) as server:
        server.wait_ready(600)
        asyncio.run(scale._concurrent(server.url, "/v1/coach", coach, 4, len(coach)))
        pid = server.proc.pid
        process, loop, client = _cpu(f"/proc/{pid}/stat"), _cpu(f"/proc/{pid}/task/{pid}/stat"), _client_cpu()
        started = time.perf_counter()
        result = asyncio.run(scale._concurrent(server.url, "/v1/coach", coach, clients, requests))
        wall = time.perf_counter() - started
        process_after, loop_after = _cpu(f"/proc/{pid}/stat"), _cpu(f"/proc/{pid}/task/{pid}/stat")
        client_s = _client_cpu() - client
    user, system = process_after[0] - process[0], process_after[1] - process[1]
    loop_s = sum(loop_after) - sum(loop)

    def per_request(seconds: float) -> float:
        return round(seconds / requests * 1000, 2)

    return {"throughput_rps": result["throughput_rps"], "p50_ms": result["p50_ms"], "errors": result["errors"],
            "wall_s": round(wall, 2), "server_cpu_ms_per_request": per_request(user + system),
            "server_user_ms": per_request(user), "server_system_ms": per_request(system),
            "event_loop_thread_ms": per_request(loop_s), "client_cpu_ms_per_request": per_request(client_s),
            "cores_busy": round((user + system + client_s) / wall / (os.cpu_count() or 1), 3)}


def run(*, clients: int, requests: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="ems-cpu-"))
    try:
        scale.seed(work, build_embedder(Settings(data_dir=work / "embedder", _env_file=None)))
        _, coach = scale.workload()
        out = {name: measure(work, coach, env, clients=clients, requests=requests) for name, env in VARIANTS.items()}
        embedded, cached = out["every query embedded"], out["query cache on"]
        return {"clients": clients, "requests": requests, "cores": os.cpu_count(), "coach_bodies": len(coach),
                "data": "the three dev files ingested (SQLite, FAISS)", "variants": out,
                "embedder_cpu_ms_per_request": round(embedded["server_cpu_ms_per_request"]
                                                     - cached["server_cpu_ms_per_request"], 2)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive whole number")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=_positive, default=16)
    parser.add_argument("--requests", type=_positive, default=800)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/cpu_split.json"))
    args = parser.parse_args()
    result = run(clients=args.clients, requests=args.requests)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
