"""psycopg's exceptions as tarry's: connection trouble is ``StoreUnavailable``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from tarry.errors import StoreError, StoreUnavailable

__all__ = ["one_line", "translated"]


@contextmanager
def translated() -> Iterator[None]:
    """Raise driver errors as :class:`StoreError` (``StoreUnavailable`` for a lost or
    refused connection, a pool timeout, a server shutdown), keeping them as ``__cause__``."""
    try:
        yield
    except psycopg.OperationalError as error:
        raise StoreUnavailable(f"PostgreSQL store unavailable: {one_line(error)}") from error
    except psycopg.Error as error:
        raise StoreError(f"PostgreSQL store failed: {one_line(error)}") from error


def one_line(error: BaseException) -> str:
    """libpq's message on one line: its lines joined, the ``connection failed:`` preamble
    and the padding after ``FATAL:`` dropped."""
    lines = [" ".join(line.split()) for line in str(error).splitlines()]
    text = "; ".join(line for line in lines if line)
    return text.removeprefix("connection failed: ")
