"""psycopg's exceptions as tarry's: connection trouble is ``StoreUnavailable``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from tarry.errors import StoreError, StoreUnavailable

__all__ = ["translated"]


@contextmanager
def translated() -> Iterator[None]:
    """Raise driver errors as :class:`StoreError` (``StoreUnavailable`` for a lost or
    refused connection, a pool timeout, a server shutdown), keeping them as ``__cause__``."""
    try:
        yield
    except psycopg.OperationalError as error:
        raise StoreUnavailable(f"PostgreSQL store unavailable: {error}") from error
    except psycopg.Error as error:
        raise StoreError(f"PostgreSQL store failed: {error}") from error
