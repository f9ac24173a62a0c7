"""The service beside other Python code: inside its process (a notebook, a test, an agent script: uvicorn on a
thread), or as `webcoach serve` in a process of its own (the benchmarks and the crash harness)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

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
            port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.app = create_app(self.settings, embedder=embedder)
        self._server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=port, log_level="warning",
                                                     access_log=False, http=self.settings.http,
                                                     loop=self.settings.loop))
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServeProcess:
    """`with ServeProcess(env) as server: httpx.get(server.url + ...)`; `env` is the whole environment (the
    settings come from it). Start-up failures raise with the end of the server's stderr."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        exe = Path(sys.executable).with_name("webcoach")
        self._stderr = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: a full pipe would stall the server
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([str(exe) if exe.exists() else "webcoach", "serve", "--port", str(self.port)],
                                     env=env, stdout=subprocess.DEVNULL, stderr=self._stderr)

    def wait_ready(self, timeout: float = 600) -> float:
        """Block until /readyz answers 200; returns the seconds since the process was started."""
        import httpx

        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"webcoach serve exited at start-up: {self.stderr_tail()}")
            try:
                if httpx.get(self.url + "/readyz", timeout=1).status_code == 200:
                    return time.perf_counter() - self.started
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"webcoach serve was not ready within {timeout:.0f} s")

    def stderr_tail(self, chars: int = 2000) -> str:
        self._stderr.seek(0)
        return self._stderr.read()[-chars:]

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs (the crash harness's fault)."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self._stderr.close()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self._stderr.close()

    def __enter__(self) -> ServeProcess:
        self.wait_ready()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
