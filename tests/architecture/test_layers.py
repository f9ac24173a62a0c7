"""The dependency direction of the design, kept true by parsing imports (condenser <- coach <- ems_service)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = {"fastapi", "sqlalchemy", "faiss", "torch", "httpx", "sentence_transformers", "transformers", "alembic",
         "onnxruntime", "uvicorn", "starlette"}
FORBIDDEN = {
    "condenser": HEAVY | {"coach", "ems_service", "migrations"},
    "coach": HEAVY | {"ems_service", "migrations"},
    "ems_service": {"migrations", "tests", "benchmarks", "webcoach"},
    # the client SDK: the shared models and httpx, nothing of the service (agents install it beside their own code)
    "webcoach": (HEAVY - {"httpx"}) | {"ems_service", "migrations", "numpy"},
}
# One home per heavy library inside ems_service: a module, or a package (ending in "/").
HOMES = {"faiss": {"index/faiss/"}, "pgvector": {"index/pgvector.py"}, "sentence_transformers": {"embeddings.py", "onnx_embedder/"},
         "httpx": {"llm.py", "embedded.py"},
         "transformers": {"llm.py", "onnx_embedder/"}, "torch": {"llm.py", "onnx_embedder/"},
         "onnxruntime": {"onnx_embedder/"}, "mcp": {"mcp_server.py"}, "httpx2": {"mcp_server.py"},
         "opentelemetry": {"tracing.py"}}


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_dependency_direction(package):
    bad = {}
    for path in (ROOT / package).rglob("*.py"):
        hit = imports(path) & FORBIDDEN[package]
        if hit:
            bad[str(path.relative_to(ROOT))] = sorted(hit)
    assert not bad


@pytest.mark.parametrize("library", sorted(HOMES))
def test_one_home_module_per_heavy_library(library):
    """Inside the service; the SDK's httpx use is webcoach/client.py alone (checked below)."""
    service = ROOT / "ems_service"
    users = {p.relative_to(service).as_posix() for p in service.rglob("*.py") if library in imports(p)}
    homes = HOMES[library]
    strays = {u for u in users if u not in homes and not any(h.endswith("/") and u.startswith(h) for h in homes)}
    assert users and not strays, strays


def test_the_service_talks_to_the_vector_backend_protocol_only():
    """Outside the backends' own modules no code imports or names the backends' classes or modules (the offline
    evaluation builds its own in-process index; `index/__init__` chooses the backend)."""
    service = ROOT / "ems_service"
    allowed = ("index/faiss/", "index/__init__.py", "index/pgvector.py", "index/pgvector_schema.py", "evaluation/")
    banned = {"NamespaceIndex", "FaissBackend", "PgvectorBackend", "ems_service.index.faiss", "ems_service.index.pgvector"}
    strays = {}
    for path in service.rglob("*.py"):
        rel = path.relative_to(service).as_posix()
        if rel.startswith(allowed):
            continue
        used = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                used |= {node.module, *(f"{node.module}.{a.name}" for a in node.names), *(a.name for a in node.names)}
            elif isinstance(node, ast.Import):
                used |= {a.name for a in node.names}
            elif isinstance(node, ast.Name):
                used.add(node.id)
            elif isinstance(node, ast.Attribute):
                used.add(node.attr)
        hit = {u for u in used for b in banned if u == b or u.startswith(b + ".")}
        if hit:
            strays[rel] = sorted(hit)
    assert not strays, strays


def test_public_names_are_exported():
    import coach
    import condenser
    import ems_service
    import webcoach

    for module in (condenser, coach, ems_service, webcoach):
        for name in module.__all__:
            assert hasattr(module, name), (module.__name__, name)


def test_sdk_talks_http_in_one_module():
    users = {p.name for p in (ROOT / "webcoach").rglob("*.py") if "httpx" in imports(p)}
    assert users == {"client.py"}


# --- Transitive imports: what a package pulls in when it is imported, not only what its own files name ---------
# The libraries that a client of the pure packages or of the SDK may not have installed. A meta path finder in a
# fresh interpreter refuses them as if they were missing, so a transitive import (coach/__init__ -> coach.risk ->
# numpy) fails the test instead of passing unnoticed.
ABSENT = sorted((HEAVY - {"httpx"}) | {"numpy", "scipy", "pandas", "sklearn", "psycopg", "psycopg2", "pgvector",
                                     "onnx", "mcp", "opentelemetry", "matplotlib", "prometheus_client", "jinja2",
                                     "threadpoolctl", "typer", "ems_service", "migrations"})
BLOCKER = '''
import json, sys


class Absent:
    """Refuses the listed top-level packages as if they were not installed; remembers which were asked for."""

    def __init__(self, names):
        self.names, self.asked = set(names), set()

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in self.names:
            self.asked.add(top)
            raise ImportError(f"No module named {top!r} (blocked by the layer test)", name=name)
        return None


absent = Absent(sys.argv[1].split(","))
sys.meta_path.insert(0, absent)
'''


def run_without_heavy(code: str, *args: str, stdin: str = "") -> dict:
    """Run `code` in a fresh interpreter with ABSENT refused; it prints one JSON object as its last line."""
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", BLOCKER + code, ",".join(ABSENT), *args], input=stdin,
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_pure_packages_import_and_work_without_heavy_libraries():
    """condenser and coach need pydantic and the condenser's small text libraries, nothing else: condensing and
    advising run without numpy; only fitting a risk model (coach.fitting, imported when `coach.fit` is asked
    for) needs numpy."""
    out = run_without_heavy('''
import coach, condenser
from coach import Neighbour, PartialRun, RiskModel, advise
from condenser import Step, Trajectory, condense

steps = [Step(action="click('Search')", url="https://shop.example.com/", error="element not found")] * 4
episode = condense(Trajectory(task="Find a red scarf", steps=steps, outcome={"success": False}))
run = PartialRun(task="Find a red scarf", steps=steps)
neighbour = Neighbour(id=1, similarity=0.9, success=episode.success, domain=episode.domain, task=episode.task,
                      summary=episode.summary, error_patterns=episode.error_patterns,
                      failure_categories=episode.failure_categories)
guidance = advise(run, [neighbour])
risk, _ = RiskModel().score({"error_streak": 4.0})
asked_before_fit = sorted(absent.asked)
try:
    from coach import fit
    fit_error = None
except ImportError as exc:
    fit_error = exc.name
print(json.dumps({"asked": asked_before_fit, "intervene": guidance.intervene, "risk": risk,
                  "categories": episode.failure_categories, "fit_error": fit_error}))
''')
    assert out["asked"] == []  # nothing heavy was even tried
    assert out["intervene"] and out["risk"] > 0.5 and "element_not_found" in out["categories"]
    assert out["fit_error"] == "numpy"  # the blocker works, and fitting is the coach's one numpy path


@pytest.fixture(scope="module")
def service_url(embedder, tmp_path_factory) -> Iterator[str]:
    """The real service on a loopback port, for the SDK run in a numpy-free interpreter."""
    from ems_service import EmbeddedServer, Settings

    tmp = tmp_path_factory.mktemp("layers")
    settings = Settings(database_url=f"sqlite:///{tmp / 'ems.db'}", data_dir=tmp / "data", _env_file=None)
    settings.coach.refit_every = 0
    with EmbeddedServer(settings, embedder=embedder) as server:
        yield server.url


def test_sdk_imports_and_talks_to_the_service_without_heavy_libraries(service_url):
    """An agent installs the SDK beside its own code: `import webcoach` loads httpx, pydantic and the shared
    models, never numpy, the database or model libraries; its clients round-trip against the real service."""
    import json

    from ems_service.dataset import to_trajectory
    from tests.conftest import dev_records

    records = [to_trajectory(r).model_dump(mode="json", exclude_none=True) for r in dev_records("webcanvas.jsonl", 12)]
    out = run_without_heavy('''
import asyncio
import webcoach
from webcoach import AsyncClient, Client, Guidance, Step, append_guidance

records = json.loads(sys.stdin.read())
with Client(sys.argv[2]) as ems:
    ingested = ems.ingest_batch(records)
    hits = ems.search(records[5]["task"], k=1)
    session = ems.start_session(task="Find a cheap flight to Boston", start_url="https://www.kayak.com")
    told = [session.add_steps([Step(action="click('search')", url="https://www.kayak.com/",
                                    error="element not found")]) for _ in range(4)]
    coaching = session.coaching()
    finished = session.finish(success=False, status="gave up")


async def main():
    async with AsyncClient(sys.argv[2]) as client:
        return await client.coach(records[0])

guidance = asyncio.run(main())
messages = append_guidance([{"role": "user", "content": "go"}], next(g for g in told if g is not None))
print(json.dumps({"asked": sorted(absent.asked), "ingested": sum(1 for r in ingested if r.get("id")),
                  "hit": hits[0]["task"] == records[5]["task"], "risk": coaching.failure_risk,
                  "episode": finished["episode_id"], "guidance": isinstance(guidance, Guidance),
                  "messages": len(messages)}))
''', service_url, stdin=json.dumps(records))
    assert set(out["asked"]) <= {"opentelemetry"}  # trace propagation is optional: looked up, found absent
    assert out["ingested"] == 12 and out["hit"] and out["guidance"]
    assert out["risk"] > 0.5 and out["episode"] > 0 and out["messages"] == 2


def test_numpy_in_the_coach_is_fitting_alone():
    users = {p.name for p in (ROOT / "coach").rglob("*.py") if "numpy" in imports(p)}
    assert users == {"fitting.py"}


def test_only_the_repositories_touch_the_tables_and_sql():
    """SQL lives in ems_service/repositories/ (and in the pgvector backend, which searches in SQL): no other module
    imports the ORM tables or SQLAlchemy's query API, so no ORM row travels up to a service or a route."""
    service = ROOT / "ems_service"
    # besides the repositories: the pgvector backend, the engine and migrations (db.py), the tables themselves,
    # tracing (listens to the engine's statements) and `webcoach pg` (creates databases on its own local server)
    allowed = ("repositories/", "index/pgvector.py", "index/pgvector_schema.py", "db.py", "tables.py", "tracing.py",
               "localpg.py")
    strays = {}
    for path in service.rglob("*.py"):
        rel = path.relative_to(service).as_posix()
        if rel.startswith(allowed):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        hit = sorted(m for m in modules if m == "ems_service.tables"
                     or (m.startswith("sqlalchemy") and m != "sqlalchemy.exc"))  # catching its errors is no SQL
        if hit:
            strays[rel] = hit
    assert not strays, strays
