"""The tour's examples, run as a user runs them against the real service: the SDK script, the curl lines
(examples/curl.sh) and the sample folders for `webcoach import-from`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from ems_service.cli import app as cli
from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"


def test_sdk_example_coaches_a_replayed_run(live_url):
    done = subprocess.run([sys.executable, str(EXAMPLES / "coach_a_run.py"), "--memory", "150"], text=True,
                          capture_output=True, timeout=900, env={**os.environ, "EMS_URL": live_url})
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "memory: 150 runs stored, 0 already there; 150 episodes" in out
    assert "coach: silent" in out and "coach: intervenes" in out
    assert "system message: Coaching for this run" in out
    episode = int(re.search(r"session finished: episode (\d+)", out).group(1))
    assert f"top hit: episode {episode} " in out, "the finished session is searchable at once"


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="curl and jq are not installed")
def test_curl_example(live_url):
    done = subprocess.run(["bash", str(EXAMPLES / "curl.sh")], text=True, capture_output=True, timeout=300,
                          env={**os.environ, "EMS_URL": live_url})
    assert done.returncode == 0, done.stderr[-3000:]
    docs = [json.loads(d) for d in re.split(r"\n(?=\{)", done.stdout[done.stdout.index("{"):].replace(
        re.search(r"session \S+\n", done.stdout).group(0), ""))]
    coach, first, second, coaching, finished = docs
    assert coach["intervene"] is True and "repeat" in coach["signals"], "three identical clicks: the coach speaks"
    assert first == {"n_steps": 2, "guidance": "none: the coach is silent"}
    assert second["n_steps"] == 5 and second["intervene"] is True
    assert second["system_message"].startswith("Coaching for this run")
    assert coaching["intervene"] is True
    assert finished["episode_id"] > 0 and finished["deduplicated"] is False


def test_import_from_sample_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("EMS_DATABASE_URL", f"sqlite:///{tmp_path / 'ems.db'}")
    monkeypatch.setenv("EMS_DATA_DIR", str(tmp_path / "data"))
    runner = CliRunner()
    browser_use, agentlab = tmp_path / "runs.jsonl", tmp_path / "agentlab.jsonl"
    result = runner.invoke(cli, ["import-from", "browser-use", str(EXAMPLES / "import-from" / "browser-use"),
                                 "--out", str(browser_use)])
    assert result.exit_code == 0 and "converted 2 runs" in result.output, result.output
    result = runner.invoke(cli, ["import-from", "agentlab", str(EXAMPLES / "import-from" / "agentlab"),
                                 "--out", str(agentlab)])
    assert result.exit_code == 0 and "converted 1 runs" in result.output, result.output
    outcomes = [json.loads(line)["outcome"]["success"] for line in browser_use.read_text().splitlines()]
    assert sorted(outcomes) == [False, True]
    assert runner.invoke(cli, ["db", "upgrade"]).exit_code == 0
    result = runner.invoke(cli, ["ingest", str(browser_use), str(agentlab)])
    assert result.exit_code == 0 and "inserted 3, deduplicated 0, rejected 0" in result.output, result.output
