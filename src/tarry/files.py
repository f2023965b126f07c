"""What tells that a file changed without reading it."""

from __future__ import annotations

import os

__all__ = ["FileSignature", "file_signature"]

FileSignature = tuple[int, int, int]
"""A file's inode, size and modification time (ns): any write or replacement moves it."""


def file_signature(path: str | os.PathLike[str]) -> FileSignature | None:
    """The signature of the file at ``path``; None when it cannot be looked at (missing)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns)
