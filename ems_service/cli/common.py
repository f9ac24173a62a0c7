"""What the commands share: the settings (read once per command, logging configured), the console on stderr,
progress bars that keep log lines above them, and the key ring."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ems_service.config import Settings
from ems_service.logs import configure_logging

if TYPE_CHECKING:
    from ems_service.keys import KeyRing

console = Console(stderr=True)
logger = logging.getLogger("ems_service.cli")


def load_settings() -> Settings:
    """The environment's settings, with logging configured from them. A setting the environment gets wrong is named
    (its variable and what is wrong, never its value: it may be a secret) and the command exits 2."""
    import typer
    from pydantic import ValidationError

    try:
        settings = Settings()
    except ValidationError as exc:
        for error in exc.errors(include_input=False, include_url=False):
            name = "EMS_" + "__".join(str(part) for part in error["loc"]).upper()
            console.print(f"[red]{name}: {error['msg']}[/red]")
        raise typer.Exit(2) from None
    configure_logging(settings.log_level, json_logs=settings.json_logs)
    return settings


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def keyring() -> KeyRing:
    """The API keys of EMS_DATABASE_URL (its schema checked first)."""
    from ems_service.db import check_schema
    from ems_service.keys import KeyRing
    from ems_service.repositories import Database, KeyRepository

    db = Database(load_settings().database_url)
    check_schema(db.engine)
    return KeyRing(KeyRepository(db))


@contextmanager
def progress_bar() -> Iterator[Progress]:
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
