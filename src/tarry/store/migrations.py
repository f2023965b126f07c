"""Schema migrations: numbered SQL files applied in order, each in one transaction.

Each backend ships a ``migrations`` folder of files named ``NNNN_description.sql``; version
``NNNN`` counts from 1 without gaps. The database records what it has applied in a
``schema_migrations`` table. This module holds the pure decisions (what is pending, whether a
database is usable as it is); the backends run the SQL.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files

from tarry.errors import MigrationError

__all__ = ["Migration", "load_migrations", "pending", "require_current"]

_FILE_NAME = re.compile(r"^(?P<version>\d{4})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True)
class Migration:
    """One schema change: its version, its name (the file's stem) and its SQL."""

    version: int
    name: str
    sql: str


def load_migrations(package: str) -> tuple[Migration, ...]:
    """The migrations in ``package``'s ``migrations`` folder, in version order.

    Raises ``ValueError`` for a misnamed file or a gap in the numbering (a packaging bug).
    """
    folder = files(package).joinpath("migrations")
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _FILE_NAME.match(entry.name)
        if match is None:
            raise ValueError(f"{package}: migration file {entry.name!r} is not NNNN_name.sql")
        sql = entry.read_text(encoding="utf-8")
        found.append(Migration(int(match["version"]), entry.name.removesuffix(".sql"), sql))
    found.sort(key=lambda migration: migration.version)
    versions = [migration.version for migration in found]
    if versions != list(range(1, len(found) + 1)):
        raise ValueError(f"{package}: migration versions must run 1, 2, 3, …; found {versions}")
    return tuple(found)


def pending(available: Sequence[Migration], applied: Sequence[int]) -> list[Migration]:
    """The migrations still to apply, in order; raises ``MigrationError`` when the database
    is newer than ``available``."""
    _refuse_newer(available, applied)
    done = set(applied)
    return [migration for migration in available if migration.version not in done]


def require_current(available: Sequence[Migration], applied: Sequence[int]) -> None:
    """Raise ``MigrationError`` unless every migration, and nothing else, was applied."""
    missing = pending(available, applied)
    if missing:
        raise MigrationError(
            f"the database schema is at version {max(applied, default=0)} but this tarry "
            f"needs version {available[-1].version}: run `tarry migrate`"
        )


def _refuse_newer(available: Sequence[Migration], applied: Sequence[int]) -> None:
    known = len(available)
    newest = max(applied, default=0)
    if newest > known:
        raise MigrationError(
            f"the database schema is at version {newest}, newer than this tarry knows "
            f"(version {known}): upgrade tarry or use another database"
        )
