"""Named queries in .sql files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tarry.store.sqlfiles import load_queries, parse_queries

QUERIES = """\
-- A file header.

-- name: get_run
-- One run by id (100% of its columns).
SELECT *
FROM runs WHERE id = :id

-- name: next_due_at
SELECT min(due_at) FROM runs;
-- a trailing note
"""


def test_sections_are_split_by_name_without_their_descriptions() -> None:
    assert dict(parse_queries(QUERIES, source="q.sql")) == {
        "get_run": "SELECT *\nFROM runs WHERE id = :id",
        "next_due_at": "SELECT min(due_at) FROM runs;",
    }


@pytest.mark.parametrize(("text", "message"), [
    ("SELECT 1\n-- name: a\nSELECT 2", "q.sql:1: SQL before the first '-- name:' line"),
    ("-- name: a\nSELECT 1\n-- name: a\nSELECT 2", "q.sql:3: query 'a' is defined twice"),
    ("-- name: Get-Run\nSELECT 1", "q.sql:1: query name 'Get-Run' is not snake_case"),
    ("-- name:\nSELECT 1", "q.sql:1: query name '' is not snake_case"),
    ("-- name: a\n-- only a comment\n\n-- name: b\nSELECT 1", "q.sql: query 'a' has no SQL"),
])
def test_malformed_query_files_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_queries(text, source="q.sql")


def test_load_queries_reads_a_file_shipped_in_a_package() -> None:
    assert "get_run" in load_queries("tarry.store.sqlite", "queries.sql")


_PARAMETERS = {
    "sqlite": re.compile(r"(?<![:\w]):([a-z_]+)"),
    "postgres": re.compile(r"%\(([a-z_]+)\)s"),
}


_ROW_SET = re.compile(r"jsonb_to_recordset\(%\(rows\)s::jsonb\) AS (?:\w+)?\((?P<fields>[^)]*)\)")
"""A PostgreSQL insert of many rows (``Tx.insert``): its one parameter, ``rows``, is a JSON
array of records whose fields are the other dialect's parameters."""


def _dialect(backend: str) -> dict[str, set[str]]:
    """Each query of a backend's queries.sql with the names of its parameters (a row set's:
    its records' fields)."""
    queries = load_queries(f"tarry.store.{backend}", "queries.sql")
    return {name: _parameters(backend, sql) for name, sql in queries.items()}


def _parameters(backend: str, sql: str) -> set[str]:
    row_set = _ROW_SET.search(sql)
    if row_set is None:
        return set(_PARAMETERS[backend].findall(sql))
    return {field.split()[0] for field in row_set["fields"].split(",")}


_LOCKS_ONLY_POSTGRES_NEEDS = {"lock_keys", "lock_hold_target", "lock_waiting_runs",
                              "lock_throttle_key", "lock_debounce_key"}
"""Queries that take a lock on PostgreSQL and are a no-op under SQLite's BEGIN IMMEDIATE."""


_CLAIMS_POSTGRES_WRITES_IN_ONE = {"due_runs", "due_run", "lease_runs"}
"""SQLite's two-statement claims, which PostgreSQL's store replaces with one statement each
(``postgres/claims.sql``)."""


def test_both_dialects_define_the_same_queries_with_the_same_parameters() -> None:
    sqlite, postgres = _dialect("sqlite"), _dialect("postgres")
    claims = load_queries("tarry.store.postgres", "claims.sql")
    assert {"claim_due_run", "claim_due_runs_with_inbox"} <= claims.keys()
    assert sorted(set(sqlite) - _CLAIMS_POSTGRES_WRITES_IN_ONE) == sorted(postgres)
    for name in _LOCKS_ONLY_POSTGRES_NEEDS:
        assert sqlite.pop(name) == set()
        postgres.pop(name)
    assert sqlite["lease_runs"] == {"ids", "worker", "lease_until", "now"}  # the regexes work
    assert postgres["insert_journal"] == {"run_id", "scope", "key", "value"}
    for name in _CLAIMS_POSTGRES_WRITES_IN_ONE:
        sqlite.pop(name)
    assert sqlite == postgres


def test_load_queries_refuses_a_name_two_files_define(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "twice_defined_queries"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.sql").write_text("-- name: get_run\nSELECT 1")
    (package / "b.sql").write_text("-- name: get_run\nSELECT 2")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=(
            r"^twice_defined_queries/b\.sql: query 'get_run' is also defined in another file$")):
        load_queries("twice_defined_queries", "a.sql", "b.sql")
