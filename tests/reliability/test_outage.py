"""PostgreSQL becomes unreachable mid-traffic: 503 with a clear error, nothing half-written, self-recovery."""

from __future__ import annotations

import os
import threading
import time
from urllib.parse import urlsplit

import httpx
import pytest
from sqlalchemy import create_engine, select

from ems_service import EmbeddedServer, Settings
from ems_service.dataset import to_trajectory
from ems_service.db import upgrade
from ems_service.tables import EpisodeRecord
from tests.conftest import dev_records
from tests.pgvector_server import reset_schema
from tests.reliability.proxy import TcpProxy

PG = os.environ.get("EMS_TEST_DATABASE_URL")
pytestmark = pytest.mark.skipif(not PG and not os.environ.get("CI"),
                                reason="EMS_TEST_DATABASE_URL not set (PostgreSQL lane runs in CI)")


def _table_ids(url: str) -> set[int]:
    engine = create_engine(url)
    with engine.connect() as c:
        ids = set(c.scalars(select(EpisodeRecord.id)))
    engine.dispose()
    return ids


def test_database_outage_gives_503_then_recovers(embedder, tmp_path):
    assert PG, "CI must provide PostgreSQL"
    reset_schema(PG)
    upgrade(PG)
    parts = urlsplit(PG)
    proxy = TcpProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    via_proxy = PG.replace(f"{parts.hostname}:{parts.port or 5432}", f"127.0.0.1:{proxy.port}")
    settings = Settings(database_url=via_proxy, data_dir=tmp_path / "data", _env_file=None)
    settings.coach.refit_every = 0
    settings.replica.follow_every_s = 0.2  # the follower thread must also survive the outage
    runs = [to_trajectory(r).model_dump(mode="json") for r in dev_records("webcanvas.jsonl", 60)]
    statuses: list[int] = []
    stop = threading.Event()
    try:
        with EmbeddedServer(settings, embedder=embedder) as server, httpx.Client(base_url=server.url,
                                                                                 timeout=30) as client:
            for run in runs[:20]:
                assert client.post("/v1/episodes", json=run).status_code == 201

            def traffic() -> None:  # searches keep coming while the database goes away and comes back
                while not stop.is_set():
                    statuses.append(client.post("/v1/search", json={"text": "buy a gift card", "k": 3}).status_code)

            worker = threading.Thread(target=traffic)
            worker.start()
            time.sleep(0.5)
            proxy.cut()
            time.sleep(0.5)
            down = client.post("/v1/episodes", json=runs[20])
            assert down.status_code == 503, down.text
            body = down.json()
            assert body["error"] == "StoreUnavailable" and "database unavailable" in body["detail"]
            assert client.post("/v1/episodes:batch", json={"episodes": runs[21:25]}).status_code == 503
            coach = client.post("/v1/coach", json={"trajectory": {"task": runs[0]["task"], "steps": runs[0]["steps"][:3]}})
            assert coach.status_code == 503
            assert client.get("/healthz").status_code == 200  # the process is alive
            assert client.get("/readyz").status_code == 503  # but not ready: the database is gone
            time.sleep(1.0)
            proxy.restore()
            deadline = time.time() + 30
            while time.time() < deadline and client.get("/readyz").status_code != 200:
                time.sleep(0.2)
            assert client.get("/readyz").status_code == 200
            again = client.post("/v1/episodes", json=runs[20])
            assert again.status_code == 201 and again.json()["deduplicated"] is False  # nothing was half-written
            stop.set()
            worker.join()
            assert set(statuses) <= {200, 503} and 503 in statuses and statuses[-1] == 200
            ids = _table_ids(PG)
            assert len(ids) == 21
            assert server.app.state.runtime.vectors.ids("default") == ids
    finally:
        stop.set()
        proxy.close()
