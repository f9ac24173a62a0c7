"""The real service under uvicorn on a loopback port, for the SDK (which speaks HTTP, not ASGI)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn

from ems_service import Settings, create_app
from ems_service.db import upgrade


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def live_url(embedder, tmp_path) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'sdk.db'}"
    upgrade(url)
    settings = Settings(database_url=url, data_dir=tmp_path / "data", _env_file=None)
    settings.coach.refit_every = 0
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(settings, embedder=embedder), host="127.0.0.1", port=port,
                                          log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if httpx.get(base + "/readyz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    else:
        raise RuntimeError("service did not start")
    yield base
    server.should_exit = True
    thread.join(timeout=30)
