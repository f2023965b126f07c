"""The PostgreSQL backend: :class:`PostgresStore`."""

from tarry.store.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
