"""Hearing other processes' changes: a dedicated connection that LISTENs on one channel."""

from __future__ import annotations

import math
import threading
from typing import Any

import psycopg

from tarry.store.postgres.errors import translated

__all__ = ["ChangeListener"]


class ChangeListener:
    """Counts notifications on the change channel; the count is the change token.

    The connection opens on the first call. When it breaks it is replaced at once, and the
    count moves on (notifications sent meanwhile were missed, so the caller should look).
    """

    def __init__(self, conninfo: str, listen: str, *, connect_timeout: float) -> None:
        self._conninfo = conninfo
        self._listen = listen
        self._connect_timeout = max(2, math.ceil(connect_timeout))  # libpq's minimum
        self._connection: psycopg.Connection[Any] | None = None
        self._heard = 0
        self._lock = threading.Lock()

    def token(self) -> int:
        """How many notifications (and reconnections) this listener has seen; never blocks
        on the server except to reconnect. Raises ``StoreUnavailable`` when it cannot."""
        with self._lock, translated():
            self._heard += self._drain()
            return self._heard

    def close(self) -> None:
        """Stop listening."""
        with self._lock:
            self._discard()

    def _drain(self) -> int:
        if self._connection is not None:
            try:
                return sum(1 for _ in self._connection.notifies(timeout=0))
            except psycopg.OperationalError:
                self._discard()
        self._connection = self._listening_connection()
        return 1

    def _listening_connection(self) -> psycopg.Connection[Any]:
        connection = psycopg.connect(self._conninfo, autocommit=True,
                                     connect_timeout=self._connect_timeout)
        try:
            connection.execute(self._listen)
        except BaseException:
            connection.close()
            raise
        return connection

    def _discard(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
