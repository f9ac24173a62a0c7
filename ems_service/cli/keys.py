"""`webcoach keys`: API keys (tenants)."""

from __future__ import annotations

import json

import typer

from ems_service.cli.common import console, keyring

app = typer.Typer(help="API keys (tenants).", no_args_is_help=True)


@app.command("create")
def keys_create(namespace: str = typer.Option(..., help="the namespace this key grants"),
                role: str = typer.Option("writer", help="admin (also manages keys), writer (posts runs), or "
                                                         "verifier (may also vouch for outcomes, promote lessons)"),
                admin: bool = typer.Option(False, help="the same as --role admin")) -> None:
    """Create a key; the key is printed alone on the last line (it is not stored, only its hash)."""
    from ems_service.errors import EMSError

    try:
        info, key = keyring().create(namespace=namespace, role=role, admin=admin)
    except EMSError as exc:
        console.print(f"[red]{exc.detail}[/red]")
        raise typer.Exit(2) from exc
    typer.echo(f"created key {info.id} for namespace {info.namespace} (role {info.role})")
    typer.echo(key)


@app.command("revoke")
def keys_revoke(key: str = typer.Argument(..., help="key id, key prefix, or the key itself")) -> None:
    """Revoke a key: its requests get 403 from now on."""
    info = keyring().revoke(key)
    typer.echo(f"revoked key {info.id} of namespace {info.namespace}")


@app.command("list")
def keys_list() -> None:
    """Keys with their namespaces (prefixes only)."""
    typer.echo(json.dumps(keyring().list(), indent=2))
