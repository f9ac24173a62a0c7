"""CLI progress bars on a terminal: log records are printed above the bar, never written over it (the log
handler used to hold the real stderr while rich redrew the bar on it)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

from tests.conftest import dev_records


def _run_on_a_terminal(cmd: list[str], env: dict[str, str], timeout: float = 300) -> str:
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                raise TimeoutError("no output from " + " ".join(cmd))
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        proc.wait(timeout=60)
    assert proc.returncode == 0, b"".join(chunks)[-3000:]
    return b"".join(chunks).decode("utf-8", "replace")


def test_log_lines_print_above_the_ingest_bar(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in dev_records("webcanvas.jsonl", 96)) + "\n")
    env = {**os.environ, "EMS_DATABASE_URL": f"sqlite:///{tmp_path / 'ems.db'}", "EMS_DATA_DIR": str(tmp_path),
           "EMS_LOG_LEVEL": "INFO", "EMS_JSON_LOGS": "false", "HF_HUB_OFFLINE": "1", "TERM": "xterm",
           "COLUMNS": "120"}
    webcoach = str(Path(sys.executable).with_name("webcoach"))
    subprocess.run([webcoach, "db", "upgrade"], env=env, check=True, capture_output=True)
    out = _run_on_a_terminal([webcoach, "ingest", str(path), "--batch-size", "16"], env)
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)  # colours; the cursor controls stay
    assert "━" in out, "a progress bar was drawn"
    log_lines = [segment for segment in out.split("\n") if "ingest default:" in segment]
    assert len(log_lines) >= 4, out[-2000:]  # one INFO line per batch of 16
    for segment in log_lines:
        visible = segment.rstrip("\r").split("\r")[-1]  # what stays on the line after its last carriage return
        assert "━" not in visible, f"a log line written over the bar: {visible!r}"
    assert "inserted 96, deduplicated 0, rejected 0" in out
