"""The `webcoach` command line, one module per command group; this module lists every command in help order.

    serve.py     serve, mcp                      the service over HTTP, its tools over MCP stdio
    ingest.py    ingest, export, import, import-from
    memory.py    search, calibrate, stats
    measure.py   eval, bench
    db.py        db upgrade
    keys.py      keys create | revoke | list
    embedder.py  embedder export
    pg.py        pg start | stop | status
    common.py    the settings, the console, progress bars, the key ring
"""

from __future__ import annotations

import typer

from ems_service.cli import db, embedder, ingest, keys, measure, memory, pg, serve

app = typer.Typer(help="WebCoach EMS: episodic memory and coaching for web agents.", no_args_is_help=True)
app.command()(serve.serve)
app.command()(ingest.ingest)
app.command("export")(ingest.export)
app.command("import")(ingest.import_)
app.command("import-from")(ingest.import_from)
app.command()(memory.search)
app.command()(memory.calibrate)
app.command("eval")(measure.eval_)
app.command()(measure.bench)
app.command()(memory.stats)
app.command("mcp")(serve.mcp_stdio)
app.add_typer(db.app, name="db")
app.add_typer(keys.app, name="keys")
app.add_typer(embedder.app, name="embedder")
app.add_typer(pg.app, name="pg")


def main() -> None:
    app()


__all__ = ["app", "main"]
