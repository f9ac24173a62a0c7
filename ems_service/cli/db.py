"""`webcoach db`: the database schema."""

from __future__ import annotations

import time

import typer

from ems_service.cli.common import console, load_settings, logger

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
