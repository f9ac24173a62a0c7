"""Measuring: `webcoach eval` (coaching quality, offline) and `webcoach bench` (the benchmark suite)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.progress import TaskID

from ems_service.cli.common import console, load_settings, progress_bar


def eval_(
    files: list[Path] | None = typer.Argument(None, exists=True, dir_okay=False,
                                              help="trajectories, JSON Lines (default: the dev set, $EMS_DEV_DATA "
                                                   "or datasets/trajectories of the source checkout)"),
    out: Path = typer.Option(Path("eval-out"), "--out", help="folder for report.json, report.md and plots"),
    seed: int = typer.Option(0, help="seed of the memory-size subsamples and CV folds"),
    k: int = typer.Option(8, min=1, help="neighbours per query"),
) -> None:
    """Measure coaching quality offline: retrieval, risk, next action, intervention (no server needed)."""
    from ems_service.dataset import DEV_FILES, dev_data_dir
    from ems_service.evaluation import EvalConfig, evaluate
    from ems_service.evaluation.report import write

    settings = load_settings()
    if not files:
        files = [dev_data_dir() / name for name in sorted(DEV_FILES)]  # the order of the published report
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            console.print(f"[red]no dev set at {dev_data_dir()}[/red] (missing {', '.join(missing)}): name the "
                          "files, or set EMS_DEV_DATA to a folder holding them")
            raise typer.Exit(2)
    c = settings.coach
    config = EvalConfig(seed=seed, k=k, domain_boost=c.domain_boost, healthy_budget=c.healthy_budget,
                        coach=c.decision())
    from ems_service.runtime import build_embedder

    embedder = build_embedder(settings)
    with progress_bar() as progress:
        tasks: dict[str, TaskID] = {}

        def tick(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = progress.add_task(stage, total=total)
            progress.update(tasks[stage], completed=done, total=total)

        report = evaluate(list(files), embedder=embedder, config=config, progress=tick)
    paths = write(report, out)
    typer.echo(json.dumps(report["headline"], indent=2))
    console.print("wrote " + ", ".join(str(p) for p in paths))


def bench(
    sizes: str = typer.Option("10000,100000,1000000", help="episode counts for the scale figures"),
    skip_peers: bool = typer.Option(False, help="leave out Chroma / Qdrant / mem0"),
) -> None:
    """Run the benchmark suite (benchmarks/ in the source checkout); writes benchmarks/results/latest.*."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    if not (root / "benchmarks" / "run.py").exists():
        console.print("[red]the benchmark suite lives in the source checkout (benchmarks/); run it from there[/red]")
        raise typer.Exit(2)
    command = [sys.executable, "-m", "benchmarks.run", "--sizes", sizes] + (["--skip-peers"] if skip_peers else [])
    raise typer.Exit(subprocess.call(command, cwd=root))
