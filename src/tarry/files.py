"""What tells that a file changed without reading it, and reading a project file within its
size limit."""

from __future__ import annotations

import io
import os
from pathlib import Path

from tarry.errors import LoadError, Problem

__all__ = ["FILE_BYTES", "FileSignature", "file_signature", "read_source"]

FileSignature = tuple[int, int, int]
"""A file's inode, size and modification time (ns): any write or replacement moves it."""

FILE_BYTES = 1_048_576
"""The default ``[limits] file_bytes``: the largest flow, manifest, scenario or ``tarry.toml``
file read (1 MiB)."""


def file_signature(path: str | os.PathLike[str]) -> FileSignature | None:
    """The signature of the file at ``path``; None when it cannot be looked at (missing)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns)


def read_source(path: Path, limit: int = FILE_BYTES, *, shown: str | None = None) -> str:
    """The UTF-8 text of the file at ``path`` (newlines as :meth:`Path.read_text` gives them).

    A file over ``limit`` bytes costs a ``stat``: it is refused before it is read, with a
    ``LoadError`` at line 1, column 1 of ``shown`` (default: ``path``) that gives its size and
    the limit; one that grows past the limit while it is read is refused the same way, after
    reading no more than the limit. ``OSError`` and ``UnicodeDecodeError`` as ``read_text``.
    """
    size = path.stat().st_size
    if size <= limit:
        with path.open("rb") as file:
            data = file.read(limit + 1)
        if len(data) <= limit:
            return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()
        size = max(size, len(data))
    raise LoadError([Problem(shown or str(path), 1, 1, f"the file is {size:,} bytes, over the "
                                                       f"limit of {limit:,} bytes ([limits] "
                                                       "file_bytes)")])
