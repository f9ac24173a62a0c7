"""The shape of the code at a git revision: modules and lines per package, the largest module and function, and
the import graph of ems_service (module -> the ems_service modules it imports).

    python -m benchmarks.code_shape [--rev REV]     # default: the work tree

Prints a summary and writes benchmarks/results/code_shape_<label>.json (label: the short revision, or `worktree`).
Read from git objects (`git show REV:path`), so any revision is measured without checking it out.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("condenser", "coach", "ems_service", "webcoach")
RESULTS = ROOT / "benchmarks" / "results"


@dataclass(frozen=True)
class Module:
    path: str  # e.g. ems_service/routes/search.py
    name: str  # e.g. ems_service.routes.search
    lines: int
    tree: ast.Module


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def _sources(rev: str | None) -> dict[str, str]:
    """path -> text of every .py file of the packages, at `rev` (None: the work tree, tracked or not)."""
    if rev is None:
        return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
                for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py")) if "__pycache__" not in p.parts}
    paths = [p for p in _git("ls-tree", "-r", "--name-only", rev, "--", *PACKAGES).splitlines() if p.endswith(".py")]
    return {p: _git("show", f"{rev}:{p}") for p in paths}


def _module_name(path: str) -> str:
    parts = path[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(rev: str | None) -> list[Module]:
    return [Module(path, _module_name(path), len(text.splitlines()), ast.parse(text))
            for path, text in sorted(_sources(rev).items())]


def _largest_function(modules: list[Module]) -> dict[str, object]:
    best: tuple[int, str] = (0, "")
    for m in modules:
        for node in ast.walk(m.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > best[0]:
                    best = (size, f"{m.name}:{node.name}")
    return {"function": best[1], "lines": best[0]}


def _imports(module: Module, known: set[str]) -> list[str]:
    """The ems_service modules `module` imports (at any depth of its code, TYPE_CHECKING blocks included)."""
    found: set[str] = set()
    package = module.name if module.path.endswith("__init__.py") else module.name.rpartition(".")[0]
    for node in ast.walk(module.tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            # `from pkg import mod` imports the module pkg.mod when there is one
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name.startswith("ems_service") and name != module.name:
                found.add(name)
    return sorted(found)


def shape(rev: str | None) -> dict[str, Any]:
    """Everything the summary prints, as one JSON-able dict."""
    modules = _modules(rev)
    packages: dict[str, dict[str, int]] = {}
    for m in modules:
        p = packages.setdefault(m.path.split("/")[0], {"modules": 0, "lines": 0})
        p["modules"] += 1
        p["lines"] += m.lines
    largest = max(modules, key=lambda m: m.lines)
    known = {m.name for m in modules}
    graph = {m.name: _imports(m, known) for m in modules if m.name.startswith("ems_service")}
    service = [m for m in modules if m.name.startswith("ems_service")]
    return {
        "revision": rev or "worktree",
        "commit": _git("rev-parse", rev or "HEAD").strip(),
        "packages": packages,
        "largest_module": {"module": largest.name, "lines": largest.lines},
        "largest_function": _largest_function(modules),
        "ems_service_modules_over_300_lines": sorted(m.name for m in service if m.lines > 300),
        "ems_service_import_edges": sum(len(v) for v in graph.values()),
        "import_graph": graph,
    }


def _short(name: str) -> str:
    return name.removeprefix("ems_service.") if name != "ems_service" else "(ems_service)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rev", default=None, help="a git revision (default: the work tree)")
    args = ap.parse_args()
    out = shape(args.rev)
    label = "worktree" if args.rev is None else _git("rev-parse", "--short", args.rev).strip()
    print(f"code shape at {out['revision']} ({str(out['commit'])[:10]})")
    for pkg, p in out["packages"].items():
        print(f"  {pkg:<12} {p['modules']:>3} modules {p['lines']:>6} lines")
    lm, lf = out["largest_module"], out["largest_function"]
    print(f"  largest module   {lm['module']} ({lm['lines']} lines)")
    print(f"  largest function {lf['function']} ({lf['lines']} lines)")
    print(f"  ems_service modules over 300 lines: {', '.join(out['ems_service_modules_over_300_lines']) or 'none'}")
    print(f"  import graph of ems_service ({out['ems_service_import_edges']} edges):")
    for name, deps in out["import_graph"].items():
        print(f"    {_short(name)} -> {', '.join(_short(d) for d in deps) or '-'}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"code_shape_{label}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
