"""`webcoach serve` and `webcoach mcp`: the service over HTTP, and its tools over MCP stdio."""

from __future__ import annotations

import typer

from ems_service.cli.common import console, is_sqlite, keyring, load_settings, logger


def serve(
    host: str | None = typer.Option(None, help="bind address (default EMS_HOST, 127.0.0.1)"),
    port: int | None = typer.Option(None, help="port (default EMS_PORT, 8080)"),
    migrate: bool = typer.Option(True, help="upgrade an embedded SQLite database before serving"),
) -> None:
    """Serve the REST API (OpenAPI at /docs)."""
    import uvicorn

    from ems_service.app import create_app
    from ems_service.db import upgrade

    settings = load_settings()
    if migrate and is_sqlite(settings.database_url):
        upgrade(settings.database_url)
    host = host or settings.host
    port = port or settings.port
    if settings.admin_key is not None:
        keyring().ensure(settings.admin_key.get_secret_value(), namespace="default", role="admin")
    if keyring().list():
        logger.info("serving on http://%s:%d with API keys (one namespace per key); data in %s", host, port,
                    settings.data_dir)
    else:
        if host not in {"127.0.0.1", "localhost", "::1"}:
            console.print(f"[red]no API keys exist: embedded mode binds 127.0.0.1 only, not {host}.[/red] "
                          "Create a key first: webcoach keys create --namespace NAME")
            raise typer.Exit(2)
        logger.info("embedded mode: no API keys, one 'default' namespace, bound to %s:%d only; data in %s", host,
                    port, settings.data_dir)
    # fewer forced hand-overs of the GIL between the request threads, the event loop and the embedder's callers:
    # 20 ms against Python's 5 served a lone coach request 0.89x as long and the mixed load's p99 0.89x (README,
    # "Performance", the eleventh session)
    import sys

    sys.setswitchinterval(settings.gil_switch_ms / 1000)
    uvicorn.run(create_app(settings), host=host, port=port, log_config=None, access_log=False,
                http=settings.http, loop=settings.loop)


def mcp_stdio(
    url: str | None = typer.Option(None, envvar="WEBCOACH_URL", help="a running service (its /mcp); default: "
                                                                     "this machine's database, in this process"),
    api_key: str | None = typer.Option(None, envvar="WEBCOACH_API_KEY", help="the key for --url (better passed "
                                                                            "in WEBCOACH_API_KEY than on the "
                                                                            "command line)"),
    namespace: str = typer.Option("default", help="the namespace of the embedded mode"),
) -> None:
    """Serve the memory and the coach as MCP tools over stdio (Claude Desktop, Cursor, any MCP client)."""
    import contextlib
    import sys

    from ems_service import mcp_server, tracing
    from ems_service.db import upgrade
    from ems_service.runtime import Runtime

    settings = load_settings()  # logs go to stderr: stdout carries the protocol
    if url:
        mcp_server.serve_stdio_proxy(url, api_key=api_key)
        return
    if is_sqlite(settings.database_url):
        upgrade(settings.database_url)
    with contextlib.redirect_stdout(sys.stderr):  # nothing a library prints may corrupt the protocol
        tracing.configure(settings.tracing)
        runtime = Runtime(settings).start()
        tracing.instrument(runtime)
    try:
        mcp_server.serve_stdio(runtime, namespace=namespace)
    finally:
        runtime.close()
