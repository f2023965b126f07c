"""Open a store from its URL (``TARRY_DATABASE``).

- ``sqlite:///relative/path.db`` (relative to the working directory) or
  ``sqlite:////absolute/path.db``; missing parent folders are created.
  ``sqlite:///:memory:`` is a private in-memory database, gone when the store closes.
- ``postgresql://user@host:port/dbname`` (or ``postgres://``), any libpq URL. Two query
  parameters belong to tarry and are not passed to the server: ``pool_size`` (most pooled
  connections, default 4) and ``pool_timeout`` (seconds to wait for a connection before the
  call fails with ``StoreUnavailable``, default 10).

An empty database is migrated on first use; one whose schema is behind or ahead of this
version of tarry is refused with :class:`tarry.errors.MigrationError`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

from tarry._suggest import did_you_mean
from tarry.errors import ConfigError, StoreUnavailable
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
        raise ConfigError(
            f"unknown store URL scheme {scheme!r}{did_you_mean(scheme.lower(), _OPENERS)}: "
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


_OPENERS: dict[str, Callable[[str], SqlStore]] = {
    "sqlite": _open_sqlite,
}
