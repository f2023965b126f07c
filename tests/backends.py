"""Store backends for tests (a pytest plugin, loaded by ``tests/conftest.py``).

A test that takes ``store`` (or ``store_url``) runs once per backend: on a fresh SQLite file
in ``tmp_path``, and on a fresh PostgreSQL database when ``TARRY_TEST_POSTGRES`` holds a server
URL (for example ``postgresql://postgres@127.0.0.1:5432/postgres``). Each PostgreSQL test gets
its own database, cloned from a template migrated once per session, and dropped afterwards.
Without the variable the PostgreSQL cases are skipped, and the summary says so loudly.

``store_factory`` opens more stores on the same database (other "processes" or "workers").
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tarry.store import open_store
from tarry.store.base import Store

POSTGRES_VARIABLE = "TARRY_TEST_POSTGRES"
POSTGRES_SKIPPED = (
    f"PostgreSQL NOT TESTED: set {POSTGRES_VARIABLE} to a server URL, "
    "e.g. postgresql://postgres@127.0.0.1:5432/postgres"
)
BACKENDS = ["sqlite"]


class PostgresServer:
    """A PostgreSQL server the tests may create and drop databases on."""

    def __init__(self, url: str) -> None:
        self.url = url

    def url_for(self, database: str) -> str:
        """The server URL with another database name."""
        return urlunsplit(urlsplit(self.url)._replace(path=f"/{database}"))

    def execute(self, statement: str, database: str | None = None) -> list[tuple[object, ...]]:
        """Run one statement outside a transaction; its rows, if any."""
        url = self.url if database is None else self.url_for(database)
        with psycopg.connect(url, autocommit=True) as connection:
            cursor = connection.execute(statement.encode())
            return cursor.fetchall() if cursor.description else []

    @contextmanager
    def database(self, template: str | None = None) -> Iterator[str]:
        """A new database (a copy of ``template``, if given), dropped afterwards; its URL."""
        name = f"tarry_test_{uuid.uuid4().hex[:12]}"
        copy = f" TEMPLATE {template}" if template else ""
        self.execute(f"CREATE DATABASE {name}{copy}")
        try:
            yield self.url_for(name)
        finally:
            self.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def postgres_server() -> PostgresServer:
    """The server named by TARRY_TEST_POSTGRES; skips the test when it is unset."""
    url = os.environ.get(POSTGRES_VARIABLE)
    if not url:
        pytest.skip(POSTGRES_SKIPPED)
    return PostgresServer(url)


@pytest.fixture(scope="session")
def postgres_template(postgres_server: PostgresServer) -> Iterator[str]:
    """The name of a database migrated once, to clone per test."""
    with postgres_server.database() as url:
        open_store(url).close()
        yield urlsplit(url).path.lstrip("/")


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[str]:
    """The URL of an empty, migrated store, once per backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('store')}/tarry.db"
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    template: str = request.getfixturevalue("postgres_template")
    with server.database(template) as url:
        yield url


@pytest.fixture
def store_factory(store_url: str) -> Iterator[Callable[[], Store]]:
    """Opens more stores on the test's database; closes them at the end of the test."""
    opened: list[Store] = []

    def open_another() -> Store:
        opened.append(open_store(store_url))
        return opened[-1]

    yield open_another
    for each in opened:
        each.close()


@pytest.fixture
def store(store_factory: Callable[[], Store]) -> Store:
    """An empty, migrated store, once per backend."""
    return store_factory()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say loudly when the PostgreSQL cases were skipped."""
    skipped = [report for report in terminalreporter.stats.get("skipped", [])
               if "PostgreSQL NOT TESTED" in str(getattr(report, "longrepr", ""))]
    if skipped:
        terminalreporter.write_sep(
            "!", f"{len(skipped)} PostgreSQL store tests did NOT run: "
                 f"set {POSTGRES_VARIABLE} to run them", red=True, bold=True)
