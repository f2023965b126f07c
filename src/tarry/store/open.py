"""Open a store from its URL (``TARRY_DATABASE``).

- ``sqlite:///relative/path.db`` (relative to the working directory) or
  ``sqlite:////absolute/path.db``; missing parent folders are created.
  ``sqlite:///:memory:`` is a private in-memory database, gone when the store closes.
- ``postgresql://user@host:port/dbname`` (or ``postgres://``), any libpq URL. Two query
  parameters belong to tarry and are not passed to the server: ``pool_size`` (most pooled
  connections, default 8: a worker and an HTTP server side by side) and ``pool_timeout``
  (seconds to wait for a connection before the call fails with ``StoreUnavailable``,
  default 10).

An empty database is migrated on first use; one whose schema is behind or ahead of this
version of tarry is refused with :class:`tarry.errors.MigrationError`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from tarry._suggest import did_you_mean
from tarry.errors import ConfigError, StoreUnavailable
from tarry.secrets import redact_database_url
from tarry.store.base import Store
from tarry.store.sqlite.store import SQLiteStore
from tarry.store.sqlstore import SqlStore

__all__ = ["open_store"]

_MEMORY = ":memory:"


def open_store(url: str, *, check_schema: bool = True) -> Store:
    """The store at ``url``, its schema migrated when the database is empty.

    Raises ``ConfigError`` for a URL tarry cannot use, ``StoreUnavailable`` when the database
    cannot be reached, and ``MigrationError`` when its schema is behind (run
    ``tarry migrate``) or ahead of this version. ``check_schema=False`` skips the schema
    check and the automatic migration (for ``tarry migrate`` itself).
    """
    scheme, colon, _ = url.partition(":")
    opener = _OPENERS.get(scheme.lower()) if colon else None
    if opener is None:
        shown = redact_database_url(scheme)
        raise ConfigError(
            f"unknown store URL scheme {shown!r}{did_you_mean(scheme.lower(), _OPENERS)}: "
            "use sqlite:///path/to/file.db or postgresql://user@host/dbname"
        )
    store = opener(url)
    if check_schema:
        try:
            store.ensure_schema()
        except BaseException:
            store.close()
            raise
    return store


def _open_sqlite(url: str) -> SqlStore:
    rest = url.partition(":")[2]
    path = unquote(rest[3:])
    if not rest.startswith("///") or not path:
        raise ConfigError(
            f"a SQLite store URL is sqlite:///relative/path.db or sqlite:////absolute/path.db, "
            f"not {url!r}"
        )
    if path != _MEMORY:
        _create_parent(Path(path))
    return SQLiteStore(path)


def _create_parent(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StoreUnavailable(f"cannot create the folder of the SQLite store {path}: "
                               f"{error}") from error


def _open_postgres(url: str) -> SqlStore:
    # psycopg takes a tenth of a second to import: only PostgreSQL users pay for it.
    from tarry.store.postgres.store import PostgresStore  # noqa: PLC0415

    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    options: dict[str, Any] = {key: _POOL_OPTIONS[key](key, value)
                               for key, value in query if key in _POOL_OPTIONS}
    server_query = urlencode([(key, value) for key, value in query if key not in _POOL_OPTIONS])
    return PostgresStore(urlunsplit(parts._replace(query=server_query)), **options)


def _positive_int(key: str, value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"store URL option {key} must be a positive integer, not {value!r}")
    return int(value)


def _positive_seconds(key: str, value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise ConfigError(f"store URL option {key} must be a positive number of seconds, "
                          f"not {value!r}")
    return seconds


_POOL_OPTIONS: dict[str, Callable[[str, str], int | float]] = {
    "pool_size": _positive_int,
    "pool_timeout": _positive_seconds,
}
"""tarry's own PostgreSQL URL parameters and how each is read."""

_OPENERS: dict[str, Callable[[str], SqlStore]] = {
    "sqlite": _open_sqlite,
    "postgresql": _open_postgres,
    "postgres": _open_postgres,
}
