"""`webcoach db upgrade --wait` (the compose migration job): a database that refuses connections for a while, as a
PostgreSQL container still starting does, is retried until it answers; one that never answers fails with a clear
message once the wait is over."""

from __future__ import annotations

import socket
import threading
import time
from urllib.parse import urlsplit

from sqlalchemy import create_engine
from typer.testing import CliRunner

from ems_service.cli import app as cli
from ems_service.db import check_schema
from tests.conftest import _postgres_url
from tests.reliability.proxy import TcpProxy


def test_upgrade_waits_for_a_database_that_comes_up(monkeypatch):
    url = _postgres_url()
    parts = urlsplit(url)
    proxy = TcpProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    proxy.cut()  # connections are accepted and dropped at once, as by a server that is not ready
    threading.Timer(1.5, proxy.restore).start()
    monkeypatch.setenv("EMS_DATABASE_URL", url.replace(f"{parts.hostname}:{parts.port or 5432}",
                                                       f"127.0.0.1:{proxy.port}"))
    try:
        started = time.monotonic()
        result = CliRunner().invoke(cli, ["db", "upgrade", "--wait", "30"])
        took = time.monotonic() - started
    finally:
        proxy.close()
    assert result.exit_code == 0, result.output
    assert took >= 1.5 and "database at head" in result.output
    engine = create_engine(url)
    try:
        check_schema(engine)  # raises unless the migrations reached head
    finally:
        engine.dispose()


def test_upgrade_gives_up_after_the_wait(monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: connections are refused
    monkeypatch.setenv("EMS_DATABASE_URL", f"postgresql+psycopg://postgres@127.0.0.1:{port}/nothing")
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["db", "upgrade", "--wait", "1"])
    took = time.monotonic() - started
    assert result.exit_code == 1
    assert "database not reachable after 1 s" in result.output
    assert 1.0 <= took < 10
    failed = CliRunner().invoke(cli, ["db", "upgrade", "--wait", "0"])
    assert failed.exit_code == 1 and "after 0 s" in failed.output
