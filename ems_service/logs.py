"""Logging set-up: a request id on every record, plain or JSON lines."""

from __future__ import annotations

import contextvars
import json
import logging

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(
            {
                "ts": self.formatTime(record),
                "level": record.levelname,
                "logger": record.name,
                "request_id": getattr(record, "request_id", "-"),
                "message": record.getMessage(),
            }
        )


def configure_logging(level: str = "INFO", *, json_logs: bool = False) -> None:
    """Install one handler on the root logger (idempotent)."""
    root = logging.getLogger()
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(
        JsonFormatter() if json_logs else logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
    )
    for old in [h for h in root.handlers if getattr(h, "_ems", False)]:
        root.removeHandler(old)
    handler._ems = True  # type: ignore[attr-defined]  # a marker on the handler: replaced, not added again
    root.addHandler(handler)
    root.setLevel(level.upper())
    for noisy in ("alembic", "httpx", "sentence_transformers", "transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
