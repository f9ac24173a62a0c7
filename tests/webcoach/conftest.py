"""The real service under uvicorn on a loopback port (ems_service.EmbeddedServer), for the SDK."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from ems_service import EmbeddedServer, Settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def live_url(embedder, tmp_path) -> Iterator[str]:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'sdk.db'}", data_dir=tmp_path / "data", _env_file=None)
    settings.coach.refit_every = 0
    with EmbeddedServer(settings, embedder=embedder) as server:
        yield server.url
