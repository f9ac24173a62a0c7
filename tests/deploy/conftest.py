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
    env.update({"EMS_DATABASE_URL": url, "EMS_DATA_DIR": str(tmp_path / "data"), "EMS_JSON_LOGS": "false",
                "EMS_ADMIN_KEY": "test-admin-key-0123456789", "HF_HUB_OFFLINE": "1"})
    migrate = COMPOSE["services"]["migrate"]["command"]
    subprocess.run([str(Path(sys.executable).parent / "webcoach")] + migrate[1:], env=env, check=True,
                   capture_output=True)
    return env


