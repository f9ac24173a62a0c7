"""Fixtures for the deployment tests: the compose commands' environment on PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import _postgres_url
from tests.deploy.test_compose import COMPOSE


@pytest.fixture
def pg_env(tmp_path):
    url = _postgres_url()
    env = dict(os.environ)
    env.update({k: str(v) for k, v in COMPOSE["services"]["api"]["environment"].items() if not str(v).startswith("$")})
    # the compose secrets, as files of the same names (compose mounts them at /run/secrets)
    secrets = {"ems_database_url": url, "ems_admin_key": "test-admin-key-0123456789"}
    for name, value in secrets.items():
        (tmp_path / name).write_text(value + "\n")
    for var, value in list(env.items()):
        if var.endswith("_FILE") and value.startswith("/run/secrets/"):
            env[var] = str(tmp_path / value.removeprefix("/run/secrets/"))
            env.pop(var.removesuffix("_FILE"), None)
    env.update({"EMS_DATA_DIR": str(tmp_path / "data"), "EMS_JSON_LOGS": "false", "HF_HUB_OFFLINE": "1"})
    migrate = COMPOSE["services"]["migrate"]["command"]
    subprocess.run([str(Path(sys.executable).parent / "webcoach")] + migrate[1:], env=env, check=True,
                   capture_output=True)
    return env


