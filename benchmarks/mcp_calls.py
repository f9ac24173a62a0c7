"""An MCP tool call against the same REST call: search (k=5) and coach (a 5-step prefix), p50 per call.

In process: REST through httpx's ASGI transport, MCP through the SDK's in-process client (`Client(MCPServer)`,
no JSON-RPC framing) and MCP's streamable HTTP through httpx2's ASGI transport, all on one runtime. Over HTTP:
one `webcoach serve` process; REST with httpx, MCP with the SDK's streamable-HTTP client, both keep-alive.
Memory: the webcanvas dev runs (396); queries: the first tasks of online_mind2web_abp (other runs); the query
vector cache is off, so every call embeds, as a new run's first step does. Variants alternate in blocks.

Run: `flock /tmp/heavy.lock python -m benchmarks.mcp_calls` -> benchmarks/results/mcp_calls.json
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from benchmarks.common import DATA, ROOT, percentiles
from ems_service import Embedder, Runtime, Settings, create_app
from ems_service.dataset import read_jsonl
from ems_service.db import upgrade
from ems_service.embedded import ServeProcess
from ems_service.mcp_server import build_server

OUT = ROOT / "benchmarks" / "results" / "mcp_calls.json"
Call = Callable[[int], Awaitable[object]]


def prepare(workdir: Path, embedder: Embedder) -> tuple[Settings, list[str], list[dict]]:
    """A SQLite memory of the webcanvas runs (index snapshot written), and the queries."""
    url = f"sqlite:///{workdir / 'ems.db'}"
    upgrade(url)
    settings = Settings(database_url=url, data_dir=workdir / "data", _env_file=None)
    settings.coach.refit_every = 0
    settings.embedder.query_cache = 0
    runtime = Runtime(settings, embedder=embedder).start(background=False)
    try:
        runs = [ln.trajectory for ln in read_jsonl(DATA / "webcanvas.jsonl") if ln.trajectory]
        runtime.ingest.ingest(namespace="default", trajectories=runs)
    finally:
        runtime.close()
    queries = [ln.trajectory for ln in read_jsonl(DATA / "online_mind2web_abp.jsonl") if ln.trajectory][:50]
    texts = [t.task for t in queries]
    partial = [{"task": t.task, "start_url": t.start_url, "steps": [s.model_dump(mode="json", exclude_none=True)
                                                                   for s in t.steps[:5]]} for t in queries]
    return settings, texts, partial


async def measure(variants: dict[str, Call], *, rounds: int, per_round: int, warmup: int = 5) -> dict[str, dict]:
    """Each variant `per_round` calls per round, the variants in turn, `rounds` times."""
    samples: dict[str, list[float]] = {name: [] for name in variants}
    round_p50: dict[str, list[float]] = {name: [] for name in variants}
    for call in variants.values():
        for i in range(warmup):
            await call(i)
    for r in range(rounds):
        for name, call in variants.items():
            block = []
            for i in range(per_round):
                t = time.perf_counter()
                await call(r * per_round + i)
                block.append(time.perf_counter() - t)
            samples[name] += block
            round_p50[name].append(statistics.median(block) * 1000)
    return {name: percentiles(s) | {"median_of_round_p50_ms": round(statistics.median(round_p50[name]), 3)}
            for name, s in samples.items()}


def _checked(result: object) -> object:
    if getattr(result, "is_error", False):
        raise RuntimeError(result.content[0].text)  # type: ignore[attr-defined]
    if isinstance(result, httpx.Response):
        result.raise_for_status()
    return result


def _variants(rest: httpx.AsyncClient, mcp: Client, texts: list[str], runs: list[dict], tag: str) -> dict[str, Call]:
    def pick(items: list, i: int) -> object:
        return items[i % len(items)]

    return {
        f"rest_search_{tag}": lambda i: _rest(rest, "/v1/search", {"text": pick(texts, i), "k": 5}),
        f"mcp_search_{tag}": lambda i: _tool(mcp, "search_memory", {"text": pick(texts, i), "k": 5}),
        f"rest_coach_{tag}": lambda i: _rest(rest, "/v1/coach", {"trajectory": pick(runs, i)}),
        f"mcp_coach_{tag}": lambda i: _tool(mcp, "get_coaching", pick(runs, i)),
    }


async def _rest(client: httpx.AsyncClient, path: str, body: dict) -> object:
    return _checked(await client.post(path, json=body))


async def _tool(client: Client, name: str, arguments: object) -> object:
    return _checked(await client.call_tool(name, dict(arguments)))  # type: ignore[call-overload]


async def in_process(settings: Settings, embedder: Embedder, texts: list[str], runs: list[dict],
                     rounds: int, per_round: int) -> dict[str, dict]:
    app = create_app(settings, embedder=embedder)
    async with app.router.lifespan_context(app):
        rt = app.state.runtime
        direct_server = build_server(lambda ctx: (rt, "default", "admin"))
        async with (httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://ems") as rest,
                    httpx2.AsyncClient(transport=httpx2.ASGITransport(app), base_url="http://ems") as h2,
                    Client(direct_server) as direct,
                    Client(streamable_http_client("http://ems/mcp", http_client=h2)) as over_asgi):
            variants = _variants(rest, direct, texts, runs, "inprocess")
            variants |= {k.replace("inprocess", "inprocess_asgi"): v for k, v in
                         _variants(rest, over_asgi, texts, runs, "inprocess").items() if k.startswith("mcp")}
            return await measure(variants, rounds=rounds, per_round=per_round)


async def over_http(url: str, texts: list[str], runs: list[dict], rounds: int, per_round: int) -> dict[str, dict]:
    async with (httpx.AsyncClient(base_url=url, timeout=60) as rest,
                httpx2.AsyncClient(timeout=60) as h2,
                Client(streamable_http_client(url + "/mcp", http_client=h2)) as mcp):
        return await measure(_variants(rest, mcp, texts, runs, "http"), rounds=rounds, per_round=per_round)


def serve_env(settings: Settings, workdir: Path, **extra: str) -> dict[str, str]:
    """The environment of a `webcoach serve` on a copy of the prepared memory."""
    shutil.copy(Path(settings.database_url.removeprefix("sqlite:///")), workdir / "ems.db")
    shutil.copytree(settings.data_dir, workdir / "data")
    return dict(os.environ, HF_HUB_OFFLINE="1", EMS_DATABASE_URL=f"sqlite:///{workdir / 'ems.db'}",
                EMS_DATA_DIR=str(workdir / "data"), EMS_EMBEDDER__QUERY_CACHE="0", EMS_COACH__REFIT_EVERY="0",
                EMS_LOG_LEVEL="WARNING", **extra)


def ratios(results: dict[str, dict]) -> dict[str, float]:
    out = {}
    for name in results:
        if name.startswith("mcp_"):
            rest = "rest_" + name.removeprefix("mcp_").replace("inprocess_asgi", "inprocess")
            out[f"{name} / {rest}"] = round(results[name]["p50_ms"] / results[rest]["p50_ms"], 3)
            out[f"{name} - {rest} (ms)"] = round(results[name]["p50_ms"] - results[rest]["p50_ms"], 3)
    return out


def main(rounds: int = 5, per_round: int = 40) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="ems-bench-mcp-"))
    embedder = Embedder()
    (workdir / "memory").mkdir()
    settings, texts, runs = prepare(workdir / "memory", embedder)
    results = asyncio.run(in_process(settings, embedder, texts, runs, rounds, per_round))
    (workdir / "serve").mkdir()
    with ServeProcess(serve_env(settings, workdir / "serve")) as server:
        results |= asyncio.run(over_http(server.url, texts, runs, rounds, per_round))
    out = {"what": __doc__.split("\n\n")[0], "command": "python -m benchmarks.mcp_calls", "rounds": rounds,
           "calls_per_round": per_round, "cpu_count": os.cpu_count(),
           "load_average_1_5_15_min_at_end": [round(x, 2) for x in os.getloadavg()],
           "python": sys.version.split()[0], "results": results, "ratios": ratios(results)}
    OUT.write_text(json.dumps(out, indent=2) + "\n")
    json.dump(out, sys.stdout, indent=2)


if __name__ == "__main__":
    main()
