"""Runs in and out of a namespace: `webcoach ingest`, `export`, `import` and `import-from`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import typer

from ems_service.cli.common import console, load_settings, progress_bar

if TYPE_CHECKING:
    from condenser import Trajectory
    from condenser.models import LabelSource
    from ems_service.dataset import Line


def ingest(
    files: list[Path] = typer.Argument(..., exists=True, dir_okay=False, help="trajectories, JSON Lines"),
    namespace: str = typer.Option("default", help="namespace to store into"),
    batch_size: int = typer.Option(64, min=1, help="episodes per embedding batch"),
    source: str = typer.Option("import", help="source of the runs: self, seed or import"),
    force_source: bool = typer.Option(False, hidden=True),
) -> None:
    """Load finished runs from JSON Lines files, with a progress bar and a summary."""
    from ems_service.dataset import read_jsonl
    from ems_service.errors import LimitExceeded
    from ems_service.runtime import Runtime

    settings = load_settings()
    runtime = Runtime(settings).start(background=False)
    inserted = deduplicated = 0
    rejected: list[tuple[str, int, str]] = []
    try:
        for path in files:
            lines = list(read_jsonl(path, source=source))
            with progress_bar() as progress:
                task = progress.add_task(path.name, total=len(lines))
                for start in range(0, len(lines), batch_size):
                    chunk = lines[start : start + batch_size]
                    good: list[tuple[Line, Trajectory]] = []
                    for ln in chunk:
                        if ln.trajectory is None:
                            rejected.append((path.name, ln.number, ln.error or ""))
                            continue
                        try:  # a file is an edge too: the limits of POST /v1/episodes, line by line
                            runtime.limits.check(ln.trajectory)
                        except LimitExceeded as exc:
                            rejected.append((path.name, ln.number, exc.detail))
                            continue
                        good.append((ln, ln.trajectory))
                    if force_source:
                        for _, trajectory in good:
                            trajectory.source = source  # type: ignore[assignment]  # --source is a free string: never checked against Source
                    results = runtime.ingest.ingest(namespace=namespace, trajectories=[t for _, t in good])
                    for (ln, _), res in zip(good, results, strict=True):
                        if res.error:
                            rejected.append((path.name, ln.number, res.error.detail))
                        elif res.deduplicated:
                            deduplicated += 1
                        else:
                            inserted += 1
                    progress.advance(task, len(chunk))
    finally:
        runtime.close()
    console.print(f"inserted {inserted}, deduplicated {deduplicated}, rejected {len(rejected)}")
    for name, number, reason in rejected[:50]:
        console.print(f"  {name}:{number}: {reason}")
    if len(rejected) > 50:
        console.print(f"  ... and {len(rejected) - 50} more")


def export(
    file: Path = typer.Argument(..., dir_okay=False, help="JSON Lines file to write"),
    namespace: str = typer.Option("default", help="namespace to export"),
) -> None:
    """Write a namespace's raw (redacted) trajectories with their current labels, one per line."""
    from ems_service.repositories import EpisodeFilter
    from ems_service.runtime import Runtime

    runtime = Runtime(load_settings()).start(background=False)
    n = 0
    try:
        with open(file, "w", encoding="utf-8") as out, progress_bar() as progress:
            task = progress.add_task(f"export {namespace}", total=runtime.episodes.count(namespace))
            cursor = None
            while True:
                page = runtime.episodes.page(namespace, EpisodeFilter(), after_id=cursor, limit=500)
                if not page:
                    break
                runs = runtime.episodes.trajectories(namespace, [rec.id for rec in page])
                for rec in page:
                    if rec.id not in runs:
                        continue  # deleted since the page was read
                    t = runs[rec.id]
                    t.outcome.success, t.outcome.label_source = rec.success, cast("LabelSource", rec.label_source)
                    t.outcome.verified = bool(rec.verified)
                    t.tags = dict(t.tags) | {"exported_episode_id": str(rec.id)}
                    out.write(t.model_dump_json(exclude_none=True) + "\n")
                    n += 1
                cursor = page[-1].id
                progress.advance(task, len(page))
    finally:
        runtime.close()
    console.print(f"exported {n} episodes of {namespace} to {file}")


def import_(
    files: list[Path] = typer.Argument(..., exists=True, dir_okay=False, help="JSON Lines written by export"),
    namespace: str = typer.Option("default", help="namespace to import into"),
    source: str = typer.Option("seed", help="source recorded on the imported runs (seed for cold-start seeding)"),
) -> None:
    """Load exported runs through the normal ingest path (condensed and embedded by this service's model)."""
    ingest(files=files, namespace=namespace, batch_size=64, source=source, force_source=True)


def import_from(
    fmt: str = typer.Argument(..., metavar="FORMAT", help="browser-use | agentlab | webcoach-ref"),
    path: Path = typer.Argument(..., exists=True, help="a file, or a directory searched recursively"),
    out: Path | None = typer.Option(None, "--out", "-o", dir_okay=False, help="JSON Lines to write (default: stdout)"),
    task: str | None = typer.Option(None, help="the task, for formats whose files do not carry it"),
) -> None:
    """Convert foreign agent logs into the canonical JSON Lines format (then `webcoach ingest` them)."""
    import sys

    from ems_service.errors import BadRequest, NotFound
    from ems_service.importing import read_foreign

    ok = failed = 0
    sink = open(out, "w", encoding="utf-8") if out else sys.stdout  # closed below
    try:
        for item in read_foreign(fmt, path, task=task):
            if item.trajectory is None:
                failed += 1
                console.print(f"[yellow]skipped {item.origin}: {item.error}[/yellow]")
                continue
            sink.write(item.trajectory.model_dump_json(exclude_none=True) + "\n")
            ok += 1
    except (BadRequest, NotFound) as exc:
        console.print(f"[red]{exc.detail}[/red]")
        raise typer.Exit(2) from exc
    finally:
        if out:
            sink.close()
    console.print(f"converted {ok} runs from {fmt}" + (f", {failed} skipped" if failed else "")
                      + (f" -> {out}" if out else ""))
    if ok == 0:
        raise typer.Exit(1)
