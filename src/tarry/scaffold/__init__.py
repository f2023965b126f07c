"""The new project ``tarry init`` writes: a commented ``tarry.toml``, an example flow, an
event manifest and a ``.gitignore`` entry for the local state folder.

The file texts live beside this module (``files/``) as package data, so they are plain files
one can read and diff.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from tarry.errors import ConfigError

__all__ = ["project_files", "write_project"]

_SOURCE = files(__name__) / "files"

_PROJECT_FILES = ("tarry.toml", "flows/hello.yaml", "events.yaml")
"""The files that must not exist yet, by project-relative path (packaged under the same)."""

_GITIGNORE = ".gitignore"
_IGNORED_STATE = {".tarry", ".tarry/", "/.tarry", "/.tarry/"}


def project_files() -> dict[str, str]:
    """The scaffold as project-relative path → text (``.gitignore`` included)."""
    texts = {name: _packaged(name) for name in _PROJECT_FILES}
    texts[_GITIGNORE] = _packaged("gitignore")
    return texts


def _packaged(name: str) -> str:
    return _SOURCE.joinpath(*name.split("/")).read_text(encoding="utf-8")


def write_project(dest: Path) -> list[Path]:
    """Write a new project into ``dest`` (created when missing); return the files written.

    Nothing is overwritten: when ``dest`` is not a folder or already holds one of the project
    files, :class:`~tarry.errors.ConfigError` is raised and nothing is written. An existing
    ``.gitignore`` is kept and gets the ``.tarry/`` entry appended unless it ignores it already.
    """
    if dest.exists() and not dest.is_dir():
        raise ConfigError(f"{dest} exists and is not a folder; choose a folder for the project")
    taken = [name for name in _PROJECT_FILES if (dest / name).exists()]
    if taken:
        raise ConfigError(f"{dest} already holds {', '.join(taken)}; tarry init never "
                          "overwrites files: move them away or choose another folder")
    texts = project_files()
    ignore = texts.pop(_GITIGNORE)
    written = [_write(dest / name, text) for name, text in texts.items()]
    gitignore = _add_to_gitignore(dest / _GITIGNORE, ignore)
    return [*written, gitignore] if gitignore else written


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _add_to_gitignore(path: Path, entry: str) -> Path | None:
    """Create ``path`` with ``entry``, or append it when missing; the path if it changed."""
    if not path.exists():
        return _write(path, entry)
    existing = path.read_text(encoding="utf-8")
    if _IGNORED_STATE & {line.strip() for line in existing.splitlines()}:
        return None
    separator = "" if existing.endswith("\n") or not existing else "\n"
    return _write(path, existing + separator + entry)
