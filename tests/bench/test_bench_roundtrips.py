"""The round-trip benchmark counts every round trip, the latest included."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import psycopg
import pytest

from backends import PostgresServer

_BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def roundtrips(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The benchmark's module, importable with its ``common`` beside it."""
    monkeypatch.syspath_prepend(str(_BENCH))
    return importlib.import_module("roundtrips")


@pytest.fixture
def counted(roundtrips: ModuleType, postgres_server: PostgresServer,
            tmp_path: Path) -> Iterator[tuple[Any, psycopg.Connection[Any]]]:
    """The benchmark's counter, installed, and a connection it traces, counting from now."""
    counter = roundtrips.RoundTrips(tmp_path)
    with counter.installed(), psycopg.connect(postgres_server.url, autocommit=True) as conn:
        counter.reset()
        yield counter, conn


@pytest.mark.postgres
def test_each_statement_awaited_is_one_round_trip_as_soon_as_it_returns(
        counted: tuple[Any, psycopg.Connection[Any]]) -> None:
    counter, conn = counted
    for _ in range(3):
        conn.execute("SELECT 1").fetchall()
    assert counter.count() == 3


@pytest.mark.postgres
def test_statements_sent_in_one_pipeline_are_one_round_trip(
        counted: tuple[Any, psycopg.Connection[Any]]) -> None:
    counter, conn = counted
    with conn.pipeline():
        cursors = [conn.execute("SELECT 1") for _ in range(3)]
    assert [cursor.fetchall() for cursor in cursors] == [[(1,)]] * 3
    assert counter.count() == 1
