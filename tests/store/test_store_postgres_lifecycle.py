"""The PostgreSQL connection lifecycle: the first connect, migrating at once from many
processes, an outage and the recovery after it, and what is pushed to an idle worker."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from store_samples import new_run

from backends import PostgresServer
from tarry.actions import ActionRegistry
from tarry.clock import SystemClock
from tarry.engine.builtins import register_builtins
from tarry.engine.catalog import FlowCatalog
from tarry.engine.runtime import Engine
from tarry.language.loader import parse_flow
from tarry.model import NewRun, RunStatus
from tarry.store import open_store
from tarry.store.aio import AsyncStore

pytestmark = pytest.mark.postgres

OPEN_AND_CLOSE = "import sys; from tarry.store import open_store; open_store(sys.argv[1]).close()"

RECOVERY_SECONDS = 5.0
"""docs/deploy.md: a worker picks work up again at most this long after the server is back."""

FLOW = """
flow: quick
steps:
  - done:
      set: { ok: true }
"""


@pytest.fixture
def own_database(postgres_server: PostgresServer, postgres_template: str) -> Iterator[str]:
    """A migrated database this test may disturb."""
    with postgres_server.database(postgres_template) as url:
        yield url


@pytest.mark.slow
def test_processes_opening_an_empty_database_at_once_all_find_it_migrated(
        postgres_server: PostgresServer) -> None:
    with postgres_server.database() as url:
        processes = [subprocess.Popen([sys.executable, "-c", OPEN_AND_CLOSE, url],
                                      stderr=subprocess.PIPE, text=True) for _ in range(4)]
        outcomes = [(process.communicate()[1], process.returncode) for process in processes]
        assert [error for error, code in outcomes if code] == []
        database = url.rsplit("/", 1)[1]
        assert postgres_server.execute("SELECT count(*) FROM schema_migrations "
                                       "GROUP BY version HAVING count(*) > 1", database) == []


def _allow_connections(server: PostgresServer, url: str, allowed: bool) -> None:
    database = url.rsplit("/", 1)[1]
    server.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS {str(allowed).lower()}")
    if not allowed:
        server.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       f"WHERE datname = '{database}' AND pid <> pg_backend_pid()")


@pytest.mark.slow
async def test_a_worker_picks_up_a_run_within_five_seconds_of_the_server_coming_back(
        postgres_server: PostgresServer, own_database: str, tmp_path: Path) -> None:
    registry = ActionRegistry()
    register_builtins(registry)
    store = open_store(own_database)
    engine = Engine(store, FlowCatalog(tmp_path, store, registry.names()), registry,
                    SystemClock())
    flow = parse_flow(FLOW, "quick.yaml")
    stop = asyncio.Event()
    worker = asyncio.create_task(engine.worker(concurrency=2).run(stop))
    try:
        await asyncio.sleep(0.3)
        _allow_connections(postgres_server, own_database, False)
        await asyncio.sleep(6.0)  # long enough for the worker's backoff to reach its most
        _allow_connections(postgres_server, own_database, True)
        back = time.monotonic()
        other = open_store(own_database)
        other.save_flow(flow.digest, flow.name, flow.source)
        now = SystemClock().now()
        other.create_run(NewRun(id="r1", flow=flow.name, flow_digest=flow.digest,
                                status=RunStatus.PENDING, inputs={}, target=None,
                                created_at=now, due_at=now), [])
        other.close()
        while (await engine.aio.get("r1")).status is not RunStatus.SUCCEEDED:
            assert time.monotonic() - back < RECOVERY_SECONDS, "not picked up in time"
            await asyncio.sleep(0.05)
    finally:
        stop.set()
        await worker
        engine.close()


async def test_a_change_by_another_process_is_pushed_to_a_waiting_store(
        postgres_url: str) -> None:
    store = open_store(postgres_url)
    astore = AsyncStore(store)
    try:
        token = await astore.change_token()
        waiting = asyncio.ensure_future(astore.wait_for_change(token, 30.0))
        await asyncio.sleep(0.1)
        began = time.monotonic()
        subprocess.run([sys.executable, "-c", CREATE_RUN, postgres_url], check=True)
        assert await waiting != token
        assert time.monotonic() - began < 30.0  # woken by the notification, not the timeout
    finally:
        astore.close()
        store.close()


CREATE_RUN = """
import sys
from datetime import UTC, datetime
from tarry.model import NewRun, RunStatus
from tarry.store import open_store
store = open_store(sys.argv[1])
now = datetime(2026, 1, 1, tzinfo=UTC)
store.create_run(NewRun(id="pushed", flow="f", flow_digest="d", status=RunStatus.PENDING,
                        inputs={}, target=None, created_at=now, due_at=now), [])
store.close()
"""


def test_a_broken_connection_is_replaced_without_a_query_to_check_it(
        postgres_server: PostgresServer, postgres_url: str) -> None:
    store = open_store(postgres_url)
    try:
        store.create_run(new_run("r1"), [])
        database = postgres_url.rsplit("/", 1)[1]
        postgres_server.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                f"WHERE datname = '{database}' AND pid <> pg_backend_pid()")
        assert store.get_run("r1").id == "r1"
    finally:
        store.close()


def test_the_lease_of_a_run_outlives_the_connection_that_took_it(
        postgres_server: PostgresServer, postgres_url: str) -> None:
    store = open_store(postgres_url)
    try:
        store.create_run(new_run("r1"), [])
        now = SystemClock().now()
        claimed = store.claim_due(now, "w", now + timedelta(seconds=30), 1)
        database = postgres_url.rsplit("/", 1)[1]
        postgres_server.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                f"WHERE datname = '{database}' AND pid <> pg_backend_pid()")
        assert [record.id for record in claimed] == ["r1"]
        assert store.get_run("r1").lease_owner == "w"
    finally:
        store.close()
