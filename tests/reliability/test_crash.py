"""The crash harness, short: SIGKILL the real server mid-ingest a few times per database."""

from __future__ import annotations

from tests.reliability import crash


def test_sigkill_loses_no_acknowledged_episode(db_url, tmp_path, embedder):
    result = crash.run(db_url, kills=3, clients=3, workdir=tmp_path, embedder=embedder, seed=1)
    assert result["acknowledged"] > 0
    assert result["lost"] == 0, result
    assert result["unsearchable"] == 0, result
    assert result["index_equals_table"], result
    assert result["stored"] >= result["acknowledged"]
