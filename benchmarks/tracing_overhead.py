"""Tracing on against off: POST /v1/coach (a 5-step prefix) p50 on two `webcoach serve` processes over copies of
one memory (the webcanvas dev runs), one with EMS_TRACING__ENABLED=true exporting every span over OTLP/HTTP to a
local collector stand-in (a thread here that answers 200 and counts what it receives), one with tracing off.
The calls alternate between the two in blocks. A traced coach call makes a request, coach, embed and index span
and one store span per SQL statement. `span_when_off_ns`: one `tracing.span` with attributes while tracing is off.
The query vector cache is off, so every call embeds.

Run: `flock /tmp/heavy.lock python -m benchmarks.tracing_overhead` -> benchmarks/results/tracing_overhead.json
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import threading
import timeit
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

from benchmarks.common import ROOT
from benchmarks.mcp_calls import measure, prepare, serve_env
from ems_service import Embedder, tracing
from ems_service.embedded import ServeProcess

OUT = ROOT / "benchmarks" / "results" / "tracing_overhead.json"


class Collector(BaseHTTPRequestHandler):
    """Accepts OTLP/HTTP export requests (what a collector would receive) and counts them."""

    exports = 0
    bytes = 0

    def do_POST(self) -> None:
        size = int(self.headers.get("content-length", 0))
        self.rfile.read(size)
        Collector.exports += 1
        Collector.bytes += size
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


async def compare(off_url: str, on_url: str, runs: list[dict], rounds: int, per_round: int) -> dict[str, dict]:
    async with httpx.AsyncClient(base_url=off_url, timeout=60) as off, httpx.AsyncClient(base_url=on_url,
                                                                                        timeout=60) as on:
        async def coach(client: httpx.AsyncClient, i: int) -> None:
            (await client.post("/v1/coach", json={"trajectory": runs[i % len(runs)]})).raise_for_status()

        return await measure({"coach_tracing_off": lambda i: coach(off, i), "coach_tracing_on": lambda i: coach(on, i)},
                             rounds=rounds, per_round=per_round)


def _span_off() -> None:
    with tracing.span("coach", namespace="default", k=8, steps=5) as current:
        current.set(intervene=False, risk=0.1)


def main(rounds: int = 7, per_round: int = 40) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="ems-bench-tracing-"))
    for name in ("memory", "off", "on"):
        (workdir / name).mkdir()
    settings, _, runs = prepare(workdir / "memory", Embedder())
    collector = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{collector.server_address[1]}/v1/traces"
    on_env = serve_env(settings, workdir / "on", EMS_TRACING__ENABLED="true", OTEL_TRACES_EXPORTER="otlp",
                       OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=endpoint, OTEL_BSP_SCHEDULE_DELAY="500")
    with ServeProcess(serve_env(settings, workdir / "off")) as off, ServeProcess(on_env) as on:
        results = asyncio.run(compare(off.url, on.url, runs, rounds, per_round))
    collector.shutdown()
    off_p50, on_p50 = results["coach_tracing_off"]["p50_ms"], results["coach_tracing_on"]["p50_ms"]
    out = {"what": __doc__.split("\n\n")[0], "command": "python -m benchmarks.tracing_overhead", "rounds": rounds,
           "calls_per_round": per_round, "cpu_count": os.cpu_count(),
           "load_average_1_5_15_min_at_end": [round(x, 2) for x in os.getloadavg()],
           "python": sys.version.split()[0],
           "results": results, "on / off (p50)": round(on_p50 / off_p50, 3),
           "on - off (p50 ms)": round(on_p50 - off_p50, 3),
           "span_when_off_ns": round(min(timeit.repeat(_span_off, number=100_000, repeat=5)) / 100_000 * 1e9),
           "otlp_exports_received": Collector.exports, "otlp_bytes_received": Collector.bytes}
    if Collector.exports == 0:
        raise SystemExit("the traced server exported nothing: the comparison would be meaningless")
    OUT.write_text(json.dumps(out, indent=2) + "\n")
    json.dump(out, sys.stdout, indent=2)


if __name__ == "__main__":
    main()
