"""Store backends for tests (a pytest plugin, loaded by ``tests/conftest.py``).

A test that takes ``store`` (or ``store_url``) runs once per backend: on a fresh SQLite file
in ``tmp_path``, and on a fresh PostgreSQL database when ``TARRY_TEST_POSTGRES`` holds a server
URL (for example ``postgresql://postgres@127.0.0.1:5432/postgres``). Each PostgreSQL test gets
a database of its own, cloned from a template migrated once per session; a database is emptied
(TRUNCATE, some 20 ms) and handed to the next test rather than dropped and cloned again (some
500 ms), and all are dropped at the end. Tests that change a database itself (its schema, who
may connect) take a fresh one from ``postgres_server.database(template)`` instead.
Without the variable the PostgreSQL cases are skipped, and the summary says so loudly.

``store_factory`` opens more stores on the same database (other "processes" or "workers");
``postgres_url`` is the PostgreSQL case alone.
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
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


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

    def databases(self, prefix: str) -> set[str]:
        """The names of the server's databases that begin with ``prefix``."""
        pattern = prefix.replace("_", "\\_")
        rows = self.execute(f"SELECT datname FROM pg_database WHERE datname LIKE '{pattern}%'")
        return {str(row[0]) for row in rows}

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


class PostgresDatabases:
    """Migrated databases lent to one test at a time and emptied in between."""

    def __init__(self, server: PostgresServer, template: str) -> None:
        self._server = server
        self._template = template
        self._free: list[str] = []
        self._made: list[str] = []

    def acquire(self) -> str:
        """The name of an empty, migrated database nobody else uses."""
        if self._free:
            return self._free.pop()
        name = f"tarry_test_{uuid.uuid4().hex[:12]}"
        self._server.execute(f"CREATE DATABASE {name} TEMPLATE {self._template}")
        self._made.append(name)
        return name

    def release(self, name: str) -> None:
        """Disconnect whatever the test left open, empty every table but the migrations
        ledger, and keep the database for the next test."""
        self._server.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                             f"WHERE datname = '{name}' AND pid <> pg_backend_pid()")
        tables = self._server.execute(
            "SELECT string_agg(quote_ident(tablename), ', ') FROM pg_tables "
            "WHERE schemaname = 'public' AND tablename <> 'schema_migrations'", name)
        self._server.execute(f"TRUNCATE {tables[0][0]} RESTART IDENTITY CASCADE", name)
        self._free.append(name)

    def drop_all(self) -> None:
        """Drop every database this object made."""
        for name in self._made:
            self._server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def postgres_template(postgres_server: PostgresServer) -> Iterator[str]:
    """The name of a database migrated once, to clone."""
    with postgres_server.database() as url:
        open_store(url).close()
        yield urlsplit(url).path.lstrip("/")


@pytest.fixture(scope="session")
def postgres_databases(postgres_server: PostgresServer,
                       postgres_template: str) -> Iterator[PostgresDatabases]:
    """Empty migrated databases, reused from test to test."""
    databases = PostgresDatabases(postgres_server, postgres_template)
    yield databases
    databases.drop_all()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer,
                 postgres_databases: PostgresDatabases) -> Iterator[str]:
    """The URL of an empty, migrated PostgreSQL database (skips without a server)."""
    name = postgres_databases.acquire()
    yield postgres_server.url_for(name)
    postgres_databases.release(name)


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The URL of an empty, migrated store, once per backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('store')}/tarry.db"
    url: str = request.getfixturevalue("postgres_url")
    return url


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
