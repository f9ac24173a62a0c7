"""Crash harness: the real server under concurrent ingest, killed with SIGKILL at random moments, restarted.

After every kill the server must start again without manual repair, and at the end every acknowledged
episode must be in the table, searchable (its own task text finds it first), and the index ids must equal
the table ids. `python -m tests.reliability.crash --db sqlite|postgresql --kills 20` is the long run (the
README's figures); tests/reliability/test_crash.py runs a short one on both databases.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
from sqlalchemy import create_engine, select

from ems_service import Runtime, Settings
from ems_service.dataset import dev_data_dir
from ems_service.db import upgrade
from ems_service.embedded import ServeProcess
from ems_service.embeddings import Embedder
from ems_service.tables import EpisodeRecord

DATA = dev_data_dir()  # datasets/trajectories, or $EMS_DEV_DATA


def _runs() -> list[dict]:
    out = []
    for name in ("webcanvas.jsonl", "online_mind2web_abp.jsonl"):
        with open(DATA / name, encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                out.append({k: r[k] for k in ("task", "steps", "outcome", "start_url", "domain") if r.get(k)})
    return out


def _base(task: str) -> str:
    return task.rsplit(" [crash ", 1)[0]


def _client(url: str, runs: list[dict], tag: str, acked: dict[int, str], lock: threading.Lock,
            stop: threading.Event, rng: random.Random) -> None:
    with httpx.Client(base_url=url, timeout=10) as http:
        n = 0
        while not stop.is_set():
            batch = []
            for _ in range(rng.choice((1, 1, 5))):
                run = dict(rng.choice(runs))
                run["task"] = f"{run['task']} [crash {tag} n{n}]"
                n += 1
                batch.append(run)
            try:
                if len(batch) == 1:
                    r = http.post("/v1/episodes", json=batch[0])
                    if r.status_code in (200, 201):
                        with lock:
                            acked[r.json()["id"]] = batch[0]["task"]
                else:
                    r = http.post("/v1/episodes:batch", json={"episodes": batch})
                    if r.status_code == 200:
                        with lock:
                            for run, res in zip(batch, r.json()["results"], strict=True):
                                if res.get("id"):
                                    acked[res["id"]] = run["task"]
            except httpx.HTTPError:
                return  # the server is gone


def run(db_url: str, *, kills: int, clients: int = 4, seed: int = 0, workdir: Path | None = None,
        embedder: Embedder | None = None, log=print) -> dict:
    workdir = workdir or Path(tempfile.mkdtemp(prefix="ems-crash-"))
    upgrade(db_url)
    env = {**os.environ, "EMS_DATABASE_URL": db_url, "EMS_DATA_DIR": str(workdir / "data"),
           "EMS_INDEX__SNAPSHOT_EVERY_S": "0.3", "EMS_COACH__REFIT_EVERY": "0", "EMS_LOG_LEVEL": "WARNING",
           "HF_HUB_OFFLINE": "1", "EMS_REPLICA__FOLLOW_EVERY_S": "0.5"}
    runs, rng = _runs(), random.Random(seed)
    acked: dict[int, str] = {}
    lock = threading.Lock()
    ready_s = []
    for k in range(kills):
        server = ServeProcess(env)
        ready_s.append(server.wait_ready())
        stop = threading.Event()
        threads = [threading.Thread(target=_client, args=(server.url, runs, f"k{k}c{c}", acked, lock, stop,
                                                          random.Random(rng.random())))
                   for c in range(clients)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.3, 2.5))
        server.kill()
        stop.set()
        for t in threads:
            t.join(timeout=30)
        log(f"kill {k + 1}/{kills}: {len(acked)} acknowledged so far")
    server = ServeProcess(env)
    ready_s.append(server.wait_ready())
    unsearchable = []
    with httpx.Client(base_url=server.url, timeout=30) as http:
        sample = rng.sample(sorted(acked), min(40, len(acked)))
        copies = Counter(_base(task) for task in acked.values())
        for episode_id in sample:
            # each run is ingested many times with only its tag changed, so k covers every stored copy of its
            # task text (plus the dev runs that share it): among them the tag barely moves the vector
            k = min(100, copies[_base(acked[episode_id])] + 10)
            hits = http.post("/v1/search", json={"text": acked[episode_id], "k": k}).json()["results"]
            if not hits or episode_id not in {h["id"] for h in hits}:
                unsearchable.append(episode_id)
    server.stop()
    engine = create_engine(db_url)
    with engine.connect() as c:
        table = set(c.scalars(select(EpisodeRecord.id).where(EpisodeRecord.namespace == "default")))
    engine.dispose()
    settings = Settings(database_url=db_url, data_dir=workdir / "data", _env_file=None)
    settings.coach.refit_every = 0
    rt = Runtime(settings, embedder=embedder).start(background=False)
    try:
        index = rt.vectors.ids("default")
    finally:
        rt.close()
    lost = sorted(set(acked) - table)
    return {"db": db_url.split(":")[0].split("+")[0], "kills": kills, "clients": clients, "acknowledged": len(acked),
            "stored": len(table), "lost": len(lost), "searched": len(sample), "unsearchable": len(unsearchable),
            "index_equals_table": index == table, "restart_s_max": round(max(ready_s), 2),
            "restart_s_median": round(sorted(ready_s)[len(ready_s) // 2], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--postgres-url", default=os.environ.get("EMS_TEST_DATABASE_URL",
                                                                 "postgresql+psycopg://postgres@127.0.0.1:5432/test"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ems-crash-"))
    if args.db == "sqlite":
        url = f"sqlite:///{work / 'crash.db'}"
    else:
        from sqlalchemy import text

        url = args.postgres_url
        engine = create_engine(url, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:  # a clean schema: the harness counts every row
            conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
            conn.execute(text("CREATE SCHEMA public"))
        engine.dispose()
    result = run(url, kills=args.kills, clients=args.clients, workdir=work,
                 log=lambda m: print(m, file=sys.stderr, flush=True))
    print(json.dumps(result))
    sys.exit(0 if result["lost"] == 0 and result["unsearchable"] == 0 and result["index_equals_table"] else 1)


if __name__ == "__main__":
    main()
