"""Looking into a namespace's memory: `webcoach search`, `stats`, and `calibrate` (its failure-risk model)."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table

from ems_service.cli.common import console, load_settings, progress_bar


def search(
    text: str = typer.Argument(..., help="what to look for"),
    k: int = typer.Option(5, min=1),
    domain: str | None = typer.Option(None),
    namespace: str = typer.Option("default"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Search stored episodes by similarity."""
    from ems_service.runtime import Runtime

    runtime = Runtime(load_settings()).start(background=False)
    try:
        hits = runtime.retrieval.search(namespace=namespace, text=text, k=k, domain=domain, touch=False)
    finally:
        runtime.close()
    if as_json:
        typer.echo(json.dumps([{"id": h.episode.id, "similarity": round(h.similarity, 4), "domain": h.episode.domain,
                                "task": h.episode.task, "success": h.episode.success} for h in hits], indent=2))
        return
    table = Table("id", "sim", "domain", "success", "task")
    for h in hits:
        table.add_row(str(h.episode.id), f"{h.similarity:.3f}", h.episode.domain or "", str(h.episode.success),
                      h.episode.task[:80])
    Console().print(table)


def calibrate(
    namespace: str = typer.Option("default"),
    max_episodes: int = typer.Option(1500, min=10, help="labelled episodes sampled for the fit"),
) -> None:
    """Fit the failure-risk model on the namespace's episodes and store it (used by the coach from now on)."""
    from ems_service.errors import CannotFit, NotReady
    from ems_service.runtime import Runtime

    runtime = Runtime(load_settings()).start(background=False)
    try:
        with progress_bar() as progress:
            task = progress.add_task("prefixes", total=None)

            def tick(done: int, total: int) -> None:
                progress.update(task, completed=done, total=total)

            metrics = runtime.risk.calibrate(namespace=namespace, max_episodes=max_episodes, progress=tick)
    except (CannotFit, NotReady) as exc:
        console.print(f"[red]cannot fit:[/red] {exc.detail}")
        raise typer.Exit(1) from exc
    finally:
        runtime.close()
    typer.echo(json.dumps(metrics, indent=2))


def stats(namespace: str = typer.Option("default")) -> None:
    """Counts for a namespace."""
    from ems_service.runtime import Runtime

    runtime = Runtime(load_settings()).start(background=False)
    try:
        typer.echo(json.dumps(runtime.catalog.stats(namespace=namespace), indent=2))
    finally:
        runtime.close()
