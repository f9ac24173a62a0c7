"""Load: 32 concurrent clients for 60 s of mixed coach / search / ingest / session traffic on the dev data.

Run: `python -m benchmarks.load [--db sqlite|postgresql] [--clients 32] [--seconds 60]` (prints JSON; with
--out, writes it). The server is `webcoach serve` in its own process, seeded with the three dev files;
every client is an asyncio task on one httpx connection pool. Reported per route: requests, errors (any
status >= 400 or transport error), p50 / p95 / p99 ms; a session is one flow of four calls (start, two appends,
finish), timed whole. `all` is every HTTP call on its own (a session's four included), and throughput counts calls.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks.common import DATA, DEV_FILES, percentiles
from ems_service.db import upgrade
from ems_service.embedded import ServeProcess

MIX = (("coach", 0.35), ("search", 0.30), ("ingest", 0.15), ("session", 0.20))


def _records() -> list[dict]:
    out = []
    for name in DEV_FILES:
        with open(DATA / name, encoding="utf-8") as fh:
            out += [json.loads(line) for line in fh]
    return [{k: r[k] for k in ("task", "steps", "outcome", "start_url", "domain") if r.get(k)} for r in out]


async def _client(http: httpx.AsyncClient, records: list[dict], rng: random.Random, until: float,
                  samples: dict[str, list[float]], errors: dict[str, int], tag: str, calls: list[float]) -> None:
    routes, weights = zip(*MIX, strict=True)
    n = 0

    async def post(path: str, body: dict) -> httpx.Response:
        started = time.perf_counter()
        try:
            return await http.post(path, json=body)
        finally:
            calls.append(time.perf_counter() - started)

    while time.perf_counter() < until:
        route = rng.choices(routes, weights)[0]
        rec = rng.choice(records)
        t = time.perf_counter()
        ok = True
        try:
            if route == "coach":
                cut = rng.randint(1, min(10, len(rec["steps"])))
                body = {"trajectory": {"task": rec["task"], "start_url": rec.get("start_url"),
                                       "steps": rec["steps"][:cut]}}
                ok = (await post("/v1/coach", body)).status_code < 400
            elif route == "search":
                ok = (await post("/v1/search", {"text": rec["task"], "k": 8})).status_code < 400
            elif route == "ingest":
                run = dict(rec, task=f"{rec['task']} [load {tag} {n}]")
                ok = (await post("/v1/episodes", run)).status_code < 400
            else:  # a short live session: start, two appends, finish
                r = await post("/v1/sessions", {"task": f"{rec['task']} [session {tag} {n}]",
                                                "start_url": rec.get("start_url")})
                ok = r.status_code < 400
                if ok:
                    sid = r.json()["id"]
                    for step in rec["steps"][:2]:
                        ok = ok and (await post(f"/v1/sessions/{sid}/steps", {"steps": [step]})).status_code < 400
                    outcome = {"success": bool(rng.random() < 0.5), "label_source": "self_report"}
                    ok = ok and (await post(f"/v1/sessions/{sid}/finish", {"outcome": outcome})).status_code < 400
        except httpx.HTTPError:
            ok = False
        samples[route].append(time.perf_counter() - t)
        errors[route] += not ok
        n += 1


async def _load(url: str, records: list[dict], clients: int, seconds: float, seed: int, tag: str = "") -> dict:
    """The load; `tag` marks the runs it ingests and the sessions it starts (task "... [load <tag>c3 17]"), so that
    two loads on one store with one seed ingest new runs, never each other's duplicates."""
    samples: dict[str, list[float]] = {r: [] for r, _ in MIX}
    errors = {r: 0 for r, _ in MIX}
    calls: list[float] = []  # every HTTP call
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:
        started = time.perf_counter()
        until = started + seconds
        rng = random.Random(seed)
        await asyncio.gather(*(_client(http, records, random.Random(rng.random()), until, samples, errors, f"{tag}c{i}",
                                       calls)
                               for i in range(clients)))
        wall = time.perf_counter() - started
    return {"clients": clients, "seconds": round(wall, 1),
            "routes": {r: {"requests": len(samples[r]), "errors": errors[r], **percentiles(samples[r] or [0.0])}
                       for r, _ in MIX},
            "all": percentiles(calls or [0.0]), "calls": len(calls),
            "total_requests": sum(len(v) for v in samples.values()), "total_errors": sum(errors.values()),
            "throughput_rps": round(len(calls) / wall, 1)}


def run(db: str, *, clients: int = 32, seconds: float = 60, seed: int = 0, postgres_url: str | None = None) -> dict:
    work = Path(tempfile.mkdtemp(prefix="ems-load-"))
    if db == "sqlite":
        url = f"sqlite:///{work / 'load.db'}"
    else:
        from sqlalchemy import create_engine, text

        url = postgres_url or os.environ.get("EMS_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
        engine = create_engine(url, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
            conn.execute(text("CREATE SCHEMA public"))
        engine.dispose()
    upgrade(url)
    env = {**os.environ, "EMS_DATABASE_URL": url, "EMS_DATA_DIR": str(work / "data"), "HF_HUB_OFFLINE": "1",
           "EMS_LOG_LEVEL": "WARNING", "EMS_COACH__REFIT_EVERY": "0", "EMS_EMBEDDER__QUERY_CACHE": "0"}
    records = _records()
    server = ServeProcess(env)
    try:
        server.wait_ready(300)
        base = server.url
        with httpx.Client(base_url=base, timeout=300) as http:
            for i in range(0, len(records), 200):
                http.post("/v1/episodes:batch", json={"episodes": records[i : i + 200]}).raise_for_status()
        result = asyncio.run(_load(base, records, clients, seconds, seed))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return {"db": db, "memory": f"{len(records)} dev runs", **result}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    result = run(args.db, clients=args.clients, seconds=args.seconds)
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
