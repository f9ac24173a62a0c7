"""The service inside another Python process (a notebook, a test, an agent script): uvicorn on a thread."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn

from ems_service.app import create_app
from ems_service.config import Settings
from ems_service.db import upgrade
from ems_service.embeddings import Embedder


class EmbeddedServer:
    """`with EmbeddedServer(settings) as server: Client(server.url)`; SQLite databases are migrated first."""

    def __init__(self, settings: Settings | None = None, *, port: int = 0, embedder: Embedder | None = None) -> None:
        self.settings = settings or Settings()
        if self.settings.database_url.startswith("sqlite"):
            upgrade(self.settings.database_url)
        if port == 0:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.app = create_app(self.settings, embedder=embedder)
        self._server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=port, log_level="warning",
                                                     access_log=False))
        self._thread = threading.Thread(target=self._server.run, name="ems-embedded", daemon=True)

    def start(self, timeout: float = 120.0) -> EmbeddedServer:
        """Start serving; returns once /readyz answers (the model loads and the indexes open first)."""
        import httpx

        self._thread.start()
        deadline = time.time() + timeout
        while time.time() < deadline:
            if not self._thread.is_alive():
                raise RuntimeError("the embedded service stopped while starting (see the log above)")
            try:
                if httpx.get(self.url + "/readyz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"the embedded service was not ready within {timeout:.0f}s")

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
