"""The crash harness, short: SIGKILL the real server mid-ingest a few times per database."""

from __future__ import annotations

import os
import time

import pytest

from ems_service.embedded import ServeProcess
from tests.reliability import crash


def test_sigkill_loses_no_acknowledged_episode(db_url, tmp_path, embedder):
    result = crash.run(db_url, kills=3, clients=3, workdir=tmp_path, embedder=embedder, seed=1)
    assert result["acknowledged"] > 0
    assert result["lost"] == 0, result
    assert result["unsearchable"] == 0, result
    assert result["index_equals_table"], result
    assert result["stored"] >= result["acknowledged"]


def test_a_server_that_cannot_start_is_reported_with_its_error(tmp_path):
    """The process helper the harness and the benchmarks share: a failed start raises with the server's
    own error instead of waiting out the timeout."""
    env = {**os.environ, "EMS_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}", "EMS_DATA_DIR": str(tmp_path),
           "HF_HUB_OFFLINE": "1", "EMS_EMBEDDER__BACKEND": "fastest"}
    server = ServeProcess(env)
    started = time.perf_counter()
    try:
        with pytest.raises(RuntimeError, match="exited at start-up: (?s:.*)EMS_EMBEDDER__BACKEND"):
            server.wait_ready(timeout=120)
    finally:
        if server.proc.poll() is None:
            server.kill()
    assert time.perf_counter() - started < 60
