"""The dependency direction of the design, kept true by parsing imports (condenser <- coach <- ems_service)."""

from __future__ import annotations

import ast
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
HOMES = {"faiss": {"index/faiss/"}, "pgvector": {"index/pgvector.py"}, "sentence_transformers": {"embeddings.py", "onnx_embedder.py"},
         "httpx": {"llm.py", "embedded.py"},
         "transformers": {"llm.py", "onnx_embedder.py"}, "torch": {"llm.py", "onnx_embedder.py"},
         "onnxruntime": {"onnx_embedder.py"}, "mcp": {"mcp_server.py"}, "httpx2": {"mcp_server.py"},
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
