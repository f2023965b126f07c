"""Log output of ``tarry serve``: plain text lines, or one JSON object per line.

A JSON line has ``ts``, ``level``, ``logger`` and ``message``, plus ``run_id`` when the line
is about a run and the record's ``fields`` (a request line's method, path, status, duration
and principal: :mod:`tarry.server.requestlog`; a refused webhook's event type and reason).
Secrets never reach a log line: tokens are not logged at all, request logs carry the method,
the path, the status, the duration and the principal only (never headers, query strings or
bodies), and every line passes through :class:`~tarry.secrets.RedactingFilter` (database
passwords, tokens).
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from enum import StrEnum

from tarry.secrets import RedactingFilter, Redactor

__all__ = ["JsonFormatter", "LogFormat", "configure_logging"]

_TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_LOGGERS = ("tarry", "uvicorn", "uvicorn.error")


class LogFormat(StrEnum):
    """How ``tarry serve`` writes its log."""

    TEXT = "text"
    JSON = "json"


class JsonFormatter(logging.Formatter):
    """One JSON object per record."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as a JSON line."""
        line: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update(fields)
        run_id = getattr(record, "run_id", None)
        if run_id is not None:
            line["run_id"] = run_id
        if record.exc_info:
            line["exception"] = record.exc_text or self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure_logging(log_format: LogFormat, level: int = logging.INFO) -> None:
    """Send tarry's and uvicorn's records to standard error in ``log_format``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format is LogFormat.JSON
                         else logging.Formatter(_TEXT_FORMAT))
    handler.addFilter(RedactingFilter(Redactor.from_environment()))
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level)
        logger.propagate = False
