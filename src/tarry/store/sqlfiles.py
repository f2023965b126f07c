"""Named SQL queries kept in ``.sql`` files.

A query file is a sequence of sections, each introduced by a line ``-- name: <query_name>``.
Comment lines around a query's SQL (its description) are dropped from its text, so a ``%``
in a description cannot confuse a driver's placeholder parser. Text before the first
section may only be comments (a file header)::

    -- Queries of the SQLite store.

    -- name: get_run
    -- One run by id.
    SELECT * FROM runs WHERE id = :id
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib.resources import files
from types import MappingProxyType

__all__ = ["load_queries", "parse_queries"]

_SECTION = re.compile(r"^--\s*name:\s*(?P<name>\S*)\s*$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def parse_queries(text: str, *, source: str) -> Mapping[str, str]:
    """The queries of one file, by name; ``source`` names the file in error messages.

    Raises ``ValueError`` for a malformed or duplicate name, a section without SQL, or SQL
    before the first section.
    """
    queries: dict[str, str] = {}
    name: str | None = None
    body: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        section = _SECTION.match(line.strip())
        if section is None:
            _check_outside_section(name, line, source, number)
            body.append(line)
            continue
        _store(queries, name, body, source)
        name = _checked_name(section["name"], queries, source, number)
        body = []
    _store(queries, name, body, source)
    return MappingProxyType(queries)


def load_queries(package: str, *filenames: str) -> Mapping[str, str]:
    """The queries of the files ``filenames`` shipped inside ``package``, merged.

    Raises ``ValueError`` as :func:`parse_queries` does, and for a name two files define.
    """
    merged: dict[str, str] = {}
    for filename in filenames:
        source = f"{package}/{filename}"
        text = files(package).joinpath(filename).read_text(encoding="utf-8")
        queries = parse_queries(text, source=source)
        for name in queries.keys() & merged.keys():
            raise ValueError(f"{source}: query {name!r} is also defined in another file")
        merged.update(queries)
    return MappingProxyType(merged)


def _check_outside_section(name: str | None, line: str, source: str, number: int) -> None:
    stripped = line.strip()
    if name is None and stripped and not stripped.startswith("--"):
        raise ValueError(f"{source}:{number}: SQL before the first '-- name:' line")


def _checked_name(name: str, seen: Mapping[str, str], source: str, number: int) -> str:
    if not _NAME.match(name):
        raise ValueError(f"{source}:{number}: query name {name!r} is not snake_case")
    if name in seen:
        raise ValueError(f"{source}:{number}: query {name!r} is defined twice")
    return name


def _store(queries: dict[str, str], name: str | None, body: list[str], source: str) -> None:
    if name is None:
        return
    sql = _strip_description(body)
    if not sql:
        raise ValueError(f"{source}: query {name!r} has no SQL")
    queries[name] = sql


def _strip_description(body: list[str]) -> str:
    """The SQL of a section without the comment and blank lines around it."""
    lines = list(body)
    while lines and _is_comment_or_blank(lines[0]):
        lines.pop(0)
    while lines and _is_comment_or_blank(lines[-1]):
        lines.pop()
    return "\n".join(lines)


def _is_comment_or_blank(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("--")
