"""Replica propagation: two `webcoach serve` processes on one PostgreSQL; time from a 201 on replica A until
replica B's index holds it (its /v1/stats index size), over 100 sequential writes.

Run: `EMS_BENCH_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/test python -m benchmarks.replicas`
(the database is reset).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from benchmarks.common import percentiles
from ems_service.db import upgrade

ADMIN = "bench-admin-key-0123456789"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(writes: int = 100) -> None:
    url = os.environ.get("EMS_BENCH_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    upgrade(url)
    work = Path(tempfile.mkdtemp(prefix="ems-replicas-"))
    env = dict(os.environ, EMS_DATABASE_URL=url, EMS_ADMIN_KEY=ADMIN, HF_HUB_OFFLINE="1",
               EMS_REPLICA__FOLLOW_EVERY_S="0.25", EMS_LOG_LEVEL="WARNING")
    ports, procs = [_port(), _port()], []
    exe = str(Path(sys.executable).parent / "webcoach")
    for i, port in enumerate(ports):
        procs.append(subprocess.Popen([exe, "serve", "--host", "127.0.0.1", "--port", str(port)],
                                      env=dict(env, EMS_DATA_DIR=str(work / f"d{i}")),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    headers = {"Authorization": f"Bearer {ADMIN}"}
    try:
        clients = [httpx.Client(base_url=f"http://127.0.0.1:{p}", headers=headers, timeout=10) for p in ports]
        for c in clients:
            for _ in range(300):
                try:
                    if c.get("/readyz").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
        a, b = clients
        delays = []
        for i in range(writes):
            task = f"Propagation probe {i}: compare prices of blue kettles"
            eid = a.post("/v1/episodes", json={"task": task, "start_url": "https://kettle.example.com",
                                               "steps": [{"action": f"click[{i}]"}]}).json()["id"]
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < 10:  # writes are sequential: B's index holds i + 1 vectors
                if b.get("/v1/stats").json()["index_size"] == i + 1:
                    break
                time.sleep(0.01)
            assert eid
            delays.append(time.perf_counter() - t0)
        out = {"writes": writes, "follow_every_s": 0.25, "propagation": percentiles(delays)}
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=30)
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
