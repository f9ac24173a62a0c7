"""mypy over the packages named in pyproject's [tool.mypy] (strict on condenser and coach), so CI fails on a type
error; `make lint` runs the same check. Its cache (.mypy_cache) makes a second run take about a second."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
STRICT = ("disallow_untyped_defs", "disallow_any_generics", "disallow_untyped_calls", "warn_return_any",
          "strict_equality")


def test_the_pure_packages_are_checked_strictly():
    """The pure packages keep --strict's flags (mypy takes --strict only for a whole run, so they are listed)."""
    strict = next(o for o in CONFIG["overrides"] if "condenser" in o["module"])
    assert {"condenser", "coach"} <= set(strict["module"]) and all(strict.get(flag) for flag in STRICT)
    assert {"condenser", "coach", "ems_service", "webcoach"} <= set(CONFIG["files"])


def test_packages_type_check(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)  # the configured files and cache are relative to the checkout
    limit = sys.getrecursionlimit()
    try:
        stdout, stderr, status = api.run(["--config-file", str(ROOT / "pyproject.toml")])
    finally:  # mypy raises the interpreter's recursion limit for good; the service's JSON depth refusal relies on it
        sys.setrecursionlimit(limit)
    assert status == 0, stdout + stderr
    assert stdout.startswith("Success: no issues found")


def test_every_ignore_names_its_error_code_and_says_why():
    """`# type: ignore[code]  # why`: mypy holds the code (ignore-without-code); this holds the reason."""
    bare = re.compile(r"#\s*type:\s*ignore(?!\[[a-z-]+(?:,\s*[a-z-]+)*\]\s+#\s*\S)")
    found = [f"{path.relative_to(ROOT)}:{n}" for package in CONFIG["files"] for path in (ROOT / package).rglob("*.py")
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if bare.search(line)]
    assert not found
