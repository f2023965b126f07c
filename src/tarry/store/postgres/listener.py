"""Hearing other processes' changes: a thread that LISTENs on one channel and pushes.

The thread blocks on its connection until the server sends a notification, counts it (the
count is the change token) and calls every subscriber at once, so an idle worker wakes by
push, not by polling. When the connection breaks the thread reconnects (every
:data:`RECONNECT_SECONDS`), and the count moves on once it is back (notifications sent
meanwhile were missed, so the caller should look).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import psycopg

from tarry.errors import StoreUnavailable
from tarry.store.postgres.errors import one_line

__all__ = ["RECONNECT_SECONDS", "ChangeListener"]

logger = logging.getLogger("tarry.store")

RECONNECT_SECONDS = 0.5
"""How long the listener waits between attempts to reconnect."""

_WAKE_SECONDS = 0.5
"""How long one wait for notifications lasts before the thread checks whether to stop."""


class ChangeListener:
    """Counts notifications on the change channel; the count is the change token.

    ``connect`` opens a new autocommit connection; the thread starts on the first
    :meth:`token` or :meth:`subscribe`.
    """

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]], listen: str) -> None:
        self._connect = connect
        self._listen = listen
        self._heard = 0
        self._error: BaseException | None = None
        self._subscribers: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._attempted = threading.Event()
        self._retry = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def token(self) -> int:
        """How many notifications (and reconnections) this listener has seen; never asks
        the server. Raises ``StoreUnavailable`` while it cannot listen."""
        self._start()
        self._attempted.wait()
        if self._error is not None:  # try again now rather than at the next retry
            self._attempted.clear()
            self._retry.set()
            self._attempted.wait()
        with self._lock:
            if self._error is not None:
                raise StoreUnavailable(f"PostgreSQL store unavailable: {one_line(self._error)}")
            return self._heard

    def subscribe(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the listener's thread) whenever the token moves."""
        with self._lock:
            self._subscribers.append(callback)
        self._start()

    def close(self) -> None:
        """Stop listening."""
        self._stopping.set()
        self._retry.set()
        if self._thread is not None:
            self._thread.join()

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._listen_forever,
                                                name="tarry-listener", daemon=True)
                self._thread.start()

    def _listen_forever(self) -> None:
        while not self._stopping.is_set():
            try:
                with self._connect() as connection:
                    connection.execute(self._listen)
                    self._heard_one()  # (re)connected: changes may have been missed
                    self._attempted.set()
                    while not self._stopping.is_set():
                        for _ in connection.notifies(timeout=_WAKE_SECONDS):
                            self._heard_one()
                        self._attempted.set()  # a caller waiting for a retry: we listen
            except psycopg.Error as error:
                with self._lock:
                    self._error = error
                self._attempted.set()
                logger.debug("change listener lost its connection: %s", error)
                self._retry.wait(RECONNECT_SECONDS)
                self._retry.clear()

    def _heard_one(self) -> None:
        with self._lock:
            self._heard += 1
            self._error = None
            subscribers = list(self._subscribers)
        for callback in subscribers:
            callback()
