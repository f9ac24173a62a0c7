"""`webcoach db`: the database schema."""

from __future__ import annotations

import time

import typer

from ems_service.cli.common import console, is_sqlite, load_settings, logger

app = typer.Typer(help="Database schema.", no_args_is_help=True)


@app.command("upgrade")
def db_upgrade(
    revision: str = typer.Argument("head", help="target revision"),
    wait: float = typer.Option(30.0, min=0, help="seconds to keep retrying while the database refuses connections"),
) -> None:
    """Apply the Alembic migrations to EMS_DATABASE_URL. A database that is still starting (a container beside
    this one, a failover) refuses connections for a while: retry until `--wait` seconds have passed."""
    from sqlalchemy.exc import OperationalError

    from ems_service.db import upgrade

    settings = load_settings()
    deadline, delay = time.monotonic() + wait, 0.25
    while True:
        try:
            upgrade(settings.database_url, revision)
            break
        except OperationalError as exc:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                console.print(f"[red]database not reachable after {wait:g} s:[/red] {str(exc.orig).strip()}")
                raise typer.Exit(1) from exc
            logger.warning("database not reachable yet (%s); retrying", type(exc.orig).__name__)
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, 2.0)
    console.print(f"database at {revision}")


@app.command("index")
def db_index(
    kind: str = typer.Option(None, help="ivfflat or hnsw (default: EMS_VECTOR__INDEX)"),
    lists: int = typer.Option(None, min=1, max=32_768, help="IVF lists (default: by the table's rows, see the "
                                                             "README; pgvector allows at most 32,768)"),
) -> None:
    """Build the pgvector backend's approximate index now (after a bulk load or an upgrade), CONCURRENTLY: searches
    and writes go on, the old index serving until the new one replaces it. The backend also builds and rebuilds it
    by itself on the primary as the table grows; this is for not waiting for that."""
    from ems_service.errors import NotReady
    from ems_service.index.pgvector_schema import build_at

    settings = load_settings()
    kind = kind or settings.vector.index
    if kind not in ("ivfflat", "hnsw"):
        console.print(f"[red]--kind must be ivfflat or hnsw, not {kind!r}[/red]")
        raise typer.Exit(2)
    if is_sqlite(settings.database_url):
        console.print("[red]the vector index is pgvector's: EMS_DATABASE_URL must be PostgreSQL[/red]")
        raise typer.Exit(2)
    started = time.monotonic()
    try:
        with console.status(f"building the {kind} index (CREATE INDEX CONCURRENTLY)"):
            state = build_at(settings.database_url, kind, lists=lists)
    except NotReady as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from exc
    if state is None:
        console.print("[yellow]another process is building the index now; nothing done[/yellow]")
        raise typer.Exit(1)
    detail = f", {state.kinds[next(iter(state.kinds))]} lists" if state.kind() == "ivfflat" else ""
    console.print(f"{kind} index built over ~{state.rows:,} rows{detail} in {time.monotonic() - started:.1f} s")
