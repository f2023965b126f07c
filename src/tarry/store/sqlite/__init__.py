"""The SQLite backend: :class:`SQLiteStore`."""

from tarry.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
