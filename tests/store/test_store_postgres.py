"""What only the PostgreSQL store does: the pool across server trouble, LISTEN, the schema."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import replace
from importlib.resources import files
from pathlib import Path
from typing import Any

import psycopg
import pytest
from store_samples import T0, at, entry, eventually, new_run, suspend

from backends import PostgresServer
from tarry.errors import StoreError, StoreUnavailable
from tarry.model import (
    CheckpointOutcome,
    EventWait,
    JournalEntry,
    NewEvent,
    RunStatus,
    RunUpdate,
    TaskCompletion,
    TaskRequest,
)
from tarry.store import open_store
from tarry.store.base import Store
from tarry.store.migrations import load_migrations
from tarry.store.postgres.connections import ThreadConnections
from tarry.store.postgres.errors import translated
from tarry.store.postgres.statements import Statements
from tarry.store.postgres.store import _QUERIES as POSTGRES_QUERIES

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_store(postgres_url: str) -> Iterator[Store]:
    """A PostgreSQL store on an empty, migrated database."""
    store = open_store(postgres_url)
    yield store
    store.close()


@pytest.fixture
def own_database(postgres_server: PostgresServer, postgres_template: str) -> Iterator[str]:
    """A migrated database this test may disturb (connections refused, schema changed)."""
    with postgres_server.database(postgres_template) as url:
        yield url


def _disconnect_everyone(server: PostgresServer, url: str) -> None:
    database = url.rsplit("/", 1)[1].split("?", maxsplit=1)[0]
    server.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                   f"WHERE datname = '{database}' AND pid <> pg_backend_pid()")


def _succeeds(call: Callable[[], Any]) -> bool:
    try:
        call()
    except StoreUnavailable:
        return False
    return True


def test_the_pool_replaces_connections_the_server_closed(
        postgres_server: PostgresServer, postgres_url: str, pg_store: Store) -> None:
    pg_store.create_run(new_run("r1"), [])
    _disconnect_everyone(postgres_server, postgres_url)
    assert pg_store.get_run("r1").id == "r1"


def test_the_listener_reconnects_and_says_it_may_have_missed_changes(
        postgres_server: PostgresServer, postgres_url: str, pg_store: Store) -> None:
    before = pg_store.change_token()
    _disconnect_everyone(postgres_server, postgres_url)

    assert eventually(lambda: pg_store.change_token() != before)
    settled = pg_store.change_token()
    other = open_store(postgres_url)
    other.create_run(new_run("r1"), [])
    other.close()

    assert eventually(lambda: pg_store.change_token() != settled)


@pytest.mark.slow
def test_a_call_during_an_outage_is_unavailable_and_calls_after_it_succeed(
        postgres_server: PostgresServer, own_database: str) -> None:
    store = open_store(f"{own_database}?pool_timeout=0.3")
    store.create_run(new_run("r1"), [])
    database = own_database.rsplit("/", 1)[1]
    postgres_server.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS false")
    try:
        _disconnect_everyone(postgres_server, own_database)
        with pytest.raises(StoreUnavailable) as caught:
            store.get_run("r1")
        assert isinstance(caught.value.__cause__, psycopg.OperationalError)
        with pytest.raises(StoreUnavailable):
            store.change_token()
    finally:
        postgres_server.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS true")

    assert eventually(lambda: _succeeds(lambda: store.get_run("r1")), timeout=20)
    assert _succeeds(store.change_token)
    store.close()


def test_a_thread_writes_on_after_writes_the_server_refused(postgres_url: str) -> None:
    # psycopg prepares a statement on its sixth use. When that use fell in a flight the server
    # aborted (behind a refused INSERT), psycopg took the statement for prepared though the
    # server had skipped its Parse, and every later write of the thread failed ("prepared
    # statement does not exist"). Which use is the sixth depends on the calls before it, so
    # refused writes are interleaved with 0 to 6 good ones (2 hit it).
    with closing(open_store(postgres_url)) as store:
        store.create_runs([(new_run("taken"), [])])
    for between in range(7):
        with closing(open_store(postgres_url)) as store:
            for round_ in range(4):
                with pytest.raises(StoreError, match="duplicate key"):
                    store.create_runs([(new_run("taken"), [])])
                for n in range(between):
                    store.create_runs([(new_run(f"r{between}-{round_}-{n}"), [])])
            assert store.count_runs() == 1 + 4 * sum(range(between + 1))  # every good one


def test_driver_errors_become_store_errors_with_the_cause(pg_store: Store) -> None:
    pg_store.create_run(new_run("r1"), [])
    with pytest.raises(StoreError, match="duplicate key value") as caught:
        pg_store.create_run(new_run("r1"), [])
    assert isinstance(caught.value.__cause__, psycopg.errors.UniqueViolation)


def test_pool_options_are_taken_from_the_url_and_the_rest_goes_to_the_server(
        postgres_server: PostgresServer, own_database: str) -> None:
    store = open_store(f"{own_database}?pool_size=2&application_name=tarry-test")
    store.create_run(new_run("r1"), [])
    database = own_database.rsplit("/", 1)[1]
    names = postgres_server.execute("SELECT DISTINCT application_name FROM pg_stat_activity "
                                    f"WHERE datname = '{database}'")
    assert store.concurrency == 2
    assert ("tarry-test",) in names
    store.close()


def test_payloads_are_stored_as_jsonb(postgres_server: PostgresServer,
                                      own_database: str) -> None:
    store = open_store(own_database)
    store.create_run(new_run("r1", inputs={"n": 1}), [])
    store.close()
    database = own_database.rsplit("/", 1)[1]
    assert postgres_server.execute("SELECT inputs -> 'n', pg_typeof(state)::text FROM runs",
                                   database) == [(1, "jsonb")]


def test_processes_migrating_an_empty_database_at_once_apply_each_migration_once(
        postgres_server: PostgresServer) -> None:
    with postgres_server.database() as url:
        errors: list[BaseException] = []

        def open_and_close() -> None:
            try:
                open_store(url).close()
            except BaseException as error:  # reported below
                errors.append(error)

        threads = [threading.Thread(target=open_and_close) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert errors == []
        database = url.rsplit("/", 1)[1]
        assert postgres_server.execute("SELECT version, name FROM schema_migrations",
                                       database) == [
            (migration.version, migration.name)
            for migration in load_migrations("tarry.store.postgres")]


# -- the PostgreSQL snapshot ------------------------------------------------------------------

_CATALOG = {
    "columns": "SELECT table_name, ordinal_position, column_name, data_type, is_nullable, "
               "column_default, is_identity FROM information_schema.columns "
               "WHERE table_schema = 'public'",
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes "
               "WHERE schemaname = 'public'",
    "constraints": "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
                   "FROM pg_constraint WHERE connamespace = 'public'::regnamespace",
    "triggers": "SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal",
    "functions": "SELECT proname, pg_get_functiondef(oid) FROM pg_proc "
                 "WHERE pronamespace = 'public'::regnamespace",
}


def _postgres_schema(server: PostgresServer, database: str) -> dict[str, list[Any]]:
    return {part: sorted(server.execute(query, database), key=repr)
            for part, query in _CATALOG.items()}


def test_postgres_migrations_build_exactly_the_schema_snapshot(
        postgres_server: PostgresServer) -> None:
    snapshot_sql = files("tarry.store.postgres").joinpath("schema.sql").read_text("utf-8")
    with postgres_server.database() as migrated, postgres_server.database() as snapshot:
        open_store(migrated).close()
        postgres_server.execute(snapshot_sql, snapshot.rsplit("/", 1)[1])

        expected = _postgres_schema(postgres_server, snapshot.rsplit("/", 1)[1])

        assert all(expected.values())  # every part of the snapshot is there
        assert _postgres_schema(postgres_server, migrated.rsplit("/", 1)[1]) == expected


_TASK = ("INSERT INTO tasks (id, run_id, step, title, assign, form, outcomes, state, "
         "created_at, until, reminders) VALUES ('{id}', 'r1', '{id}', 'Review', '[]', "
         "'{{\"type\": \"object\", \"properties\": {{\"alpha\": {{}}, \"zeta\": {{}}}}}}', "
         "'[\"ok\"]', 'open', 0, 1, 0)")


def test_the_upgrade_to_forms_as_json_text_keeps_the_tasks_and_the_order_of_new_forms(
        postgres_server: PostgresServer) -> None:
    with postgres_server.database() as url:
        database = url.rsplit("/", 1)[1]
        old = open_store(url, check_schema=False)
        old._migrations = old._migrations[:7]  # type: ignore[attr-defined]  # release 7
        old.migrate()
        old.close()
        postgres_server.execute(  # as release 7 wrote a run
            "INSERT INTO runs (id, flow, flow_digest, status, inputs, state, created_at, "
            "updated_at) VALUES ('r1', 'f', 'd', 'waiting', '{}', '{}', 0, 0)", database)
        postgres_server.execute(_TASK.format(id="before"), database)

        upgrade = open_store(url, check_schema=False)
        assert upgrade.migrate()[:3] == ["0008_task_form_order", "0009_created_in_run_row",
                                         "0010_listed_per_status"]
        upgrade.close()
        postgres_server.execute(_TASK.format(id="after"), database)

        store = open_store(url)
        forms = {task_id: store.get_task(task_id).request.form for task_id in ("before", "after")}
        store.close()
    assert forms["before"] == forms["after"] == {"type": "object",
                                                 "properties": {"alpha": {}, "zeta": {}}}
    assert list(forms["after"]["properties"]) == ["alpha", "zeta"]  # as written
    assert list(forms["before"]["properties"]) == ["zeta", "alpha"]  # jsonb's order: by length


def test_a_claim_reads_the_partial_due_index(postgres_server: PostgresServer,
                                             own_database: str) -> None:
    database = own_database.rsplit("/", 1)[1]
    postgres_server.execute(
        "INSERT INTO runs (id, flow, flow_digest, status, inputs, state, due_at, created_at, "
        "updated_at) SELECT 'r' || n, 'f', 'd', 'waiting', '{}', '{}', n, 0, 0 "
        "FROM generate_series(1, 5000) AS n", database)
    postgres_server.execute("ANALYZE runs", database)

    plan = postgres_server.execute(
        "EXPLAIN SELECT id FROM runs WHERE due_at <= 10 ORDER BY due_at LIMIT 5 "
        "FOR UPDATE SKIP LOCKED", database)

    assert "runs_due" in " ".join(str(row[0]) for row in plan)


def _traced(store: Store, call: Callable[[], object], folder: Path) -> list[str]:
    """The lines of libpq's protocol trace of ``call`` on this thread's connection."""
    connection = store._connections.cursor().connection  # type: ignore[attr-defined]
    path = folder / "trace.txt"
    with path.open("w") as trace:
        connection.pgconn.trace(trace.fileno())
        connection.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
        call()
        connection.pgconn.untrace()
    return path.read_text().splitlines()


def _round_trips(store: Store, call: Callable[[], object], folder: Path) -> int:
    """How often ``call`` turned, on this thread's connection, from sending to the server
    to reading its answer (a flight of pipelined statements is one)."""
    sides = [line[:1] for line in _traced(store, call, folder) if line[:1] in {"F", "B"}]
    return sum(1 for sent, read in itertools.pairwise(sides)
               if (sent, read) == ("F", "B"))


def _statements(store: Store, call: Callable[[], object], folder: Path) -> int:
    """How many statements ``call`` sent on this thread's connection (the Bind messages,
    one per statement executed)."""
    return sum(1 for line in _traced(store, call, folder) if line.split("\t")[2:3] == ["Bind"])


def test_a_checkpoint_inserts_its_history_and_journal_in_one_statement_each(
        pg_store: Store, tmp_path: Path) -> None:
    pg_store.create_runs([(new_run(name), []) for name in ("a", "b", "c", "d")])
    pg_store.claim_due(T0, "w1", at(30), 4)

    def update(run_id: str, entries: int) -> RunUpdate:
        return suspend(run_id, at(600), history=[entry(f"e{n}", n) for n in range(entries)],
                       journal=[JournalEntry("bindings", f"k{n}", n) for n in range(entries)])

    few = _statements(pg_store, lambda: pg_store.checkpoint(
        "w1", T0, [update("a", 1), update("b", 1)]), tmp_path)
    many = _statements(pg_store, lambda: pg_store.checkpoint(
        "w1", T0, [update("c", 30), update("d", 30)]), tmp_path)

    assert many == few  # was 116 statements more: one per history and journal row
    assert [item.kind for item in pg_store.history("d")] == [f"e{n}" for n in range(30)]
    assert [item.key for item in pg_store.read_journal("c", scopes=["bindings"])] == [
        f"k{n}" for n in range(30)]


def test_a_claim_goes_out_with_its_commit_in_one_flight(pg_store: Store,
                                                        tmp_path: Path) -> None:
    pg_store.create_runs([(new_run(name), []) for name in ("a", "b", "c", "d")])

    claim = _round_trips(pg_store, lambda: pg_store.claim_due(T0, "w1", at(30), 2), tmp_path)
    checkpoint = _round_trips(pg_store, lambda: pg_store.checkpoint(
        "w1", T0, [suspend("a", at(600))]), tmp_path)
    checkpoint_and_claim = _round_trips(pg_store, lambda: pg_store.checkpoint_and_claim(
        "w1", T0, [suspend("b", at(600))], lease_until=at(30), limit=1), tmp_path)

    assert claim == 1  # was 3: its rows, the end of its flight, then the COMMIT alone
    assert checkpoint_and_claim == checkpoint  # the claim rides with the COMMIT
    assert {run.id: run.lease_owner for run in pg_store.list_runs()} == {
        "a": None, "b": None, "c": "w1", "d": None}


def test_a_send_is_two_round_trips_however_many_events_it_records(
        pg_store: Store, tmp_path: Path) -> None:
    def event(event_id: str) -> NewEvent:
        return NewEvent(id=event_id, type="ping", data={}, received_at=T0,
                        match_key=f'["{event_id}"]')

    one = _round_trips(pg_store, lambda: pg_store.record_event(event("e1"), T0), tmp_path)
    many = _round_trips(pg_store, lambda: pg_store.record_events(
        [(event(f"e{n}"), None) for n in range(2, 12)], T0), tmp_path)

    # The locks and both reads (the stored ids, the waiting branches) go out in one flight,
    # the writes with the COMMIT in the other (the reads were a flight each, and each read
    # inside its pipeline a round trip more).
    assert (one, many) == (2, 2)
    assert len(pg_store.list_events(now=T0)) == 11


def test_a_task_completion_is_three_round_trips_and_delivers_it(pg_store: Store,
                                                                 tmp_path: Path) -> None:
    task = TaskRequest(id="t1", step="approve", title="Approve?", outcomes=("yes", "no"),
                       created_at=T0, until=at(600))
    pg_store.create_run(new_run("r1"), [])
    pg_store.claim_run("r1", T0, "w0", at(30))
    pg_store.checkpoint("w0", T0, [suspend("r1", at(600), tasks=(task,))])

    trips = _round_trips(pg_store, lambda: pg_store.complete_task(
        TaskCompletion("t1", "yes", {}, "ada", at(1))), tmp_path)

    # The task's run; the two locks with the task under them; the writes, the task as they
    # leave it and the COMMIT (it was nine: a round trip per statement).
    assert trips == 3
    assert pg_store.get_run("r1").due_at == at(1)
    assert [(event.event_id, event.data["outcome"]) for event in
            pg_store.inbox(["r1"])["r1"]] == [("t1", "yes")]


def test_a_commit_that_fails_after_the_final_read_raises_and_keeps_nothing(
        own_database: str) -> None:
    connections = ThreadConnections(own_database, connect_timeout=5,
                                    configure=lambda connection: None)
    connections.cursor().execute(  # a violation found at COMMIT, not at the INSERT
        "CREATE TABLE parent (id int PRIMARY KEY);"
        "CREATE TABLE child (parent int REFERENCES parent DEFERRABLE INITIALLY DEFERRED)")
    queries = {"adopt": "INSERT INTO child VALUES (%(parent)s) RETURNING parent"}

    def final(parent: int) -> list[Any]:
        statements = Statements(connections, queries, transaction=True)
        try:
            with translated():
                rows = statements.final("adopt", {"parent": parent})
                statements.commit()  # sends nothing: the COMMIT went with the read
            return rows
        except BaseException:
            statements.rollback()
            raise
        finally:
            statements.close()

    with pytest.raises(StoreError, match="foreign key"):
        final(7)
    connections.cursor().execute("INSERT INTO parent VALUES (8)")
    assert final(8) == [{"parent": 8}]
    assert connections.cursor().execute("SELECT parent FROM child").fetchall() == [
        {"parent": 8}]
    connections.close()


def test_a_selective_journal_read_looks_each_key_up(postgres_server: PostgresServer,
                                                   own_database: str) -> None:
    # A young table's statistics once made the planner read every entry of the run (a wake
    # after 10,000 steps read 10,000 rows to find one); each key is an index lookup.
    database = own_database.rsplit("/", 1)[1]
    postgres_server.execute(
        "INSERT INTO runs (id, flow, flow_digest, status, inputs, state, created_at, "
        "updated_at) VALUES ('r', 'f', 'd', 'waiting', '{}', '{}', 0, 0)", database)
    postgres_server.execute(
        "INSERT INTO run_journal (run_id, scope, key, value) "
        "SELECT 'r', '', 's' || n, '{}' FROM generate_series(1, 3000) AS n", database)
    query = POSTGRES_QUERIES["journal_entries"]
    params = {"run_id": "r", "scopes": '[""]', "selective": "", "keys": '["s1", "s7"]'}
    with psycopg.connect(own_database) as connection:
        plan = "\n".join(row[0] for row in connection.execute(
            "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + query, params))
        found = connection.execute(query, params).fetchall()

    assert [row[2] for row in found] == ["s1", "s7"]
    assert "AND (key = keys.key))" in plan  # an index condition, not a filter
    assert "rows=3000" not in plan


def test_a_checkpoint_and_a_delivery_on_one_correlation_do_not_deadlock(
        postgres_url: str, pg_store: Store) -> None:
    wait = EventWait(wait_id="approval", type="slack.approval", match_key="k", until=at(3600))
    pg_store.create_run(new_run("r1"), [])
    pg_store.claim_run("r1", T0, "w1", at(30))
    suspend = RunUpdate(run_id="r1", status=RunStatus.WAITING, state={}, history=[],
                        due_at=at(3600), waits=(wait,))
    pg_store.checkpoint("w1", T0, [suspend])
    pg_store.claim_run("r1", at(3600), "w1", at(3630))  # the deadline: the wait ends
    errors: list[BaseException] = []

    def checkpoint_again() -> None:
        try:
            pg_store.checkpoint("w1", at(3601), [replace(suspend, due_at=at(7200), waits=())])
        except BaseException as error:  # reported below
            errors.append(error)

    with psycopg.connect(postgres_url) as delivery:  # a delivery on the same correlation
        delivery.execute("SELECT pg_advisory_xact_lock(hashtext('slack.approval'), hashtext('k'))")
        checkpointing = threading.Thread(target=checkpoint_again)
        checkpointing.start()
        assert eventually(lambda: _waiting_for_a_lock(delivery))
        delivery.execute("SET LOCAL lock_timeout = '5s'")
        delivery.execute("DELETE FROM event_waits WHERE run_id = 'r1'")
        delivery.commit()
        checkpointing.join()

    assert errors == []


def test_a_lease_renewal_and_a_checkpoint_of_the_same_runs_do_not_deadlock(
        postgres_url: str, pg_store: Store) -> None:
    for run_id in ("r1", "r2"):
        pg_store.create_run(new_run(run_id), [])
        pg_store.claim_run(run_id, T0, "w1", at(30))
    updates = [RunUpdate(run_id=run_id, status=RunStatus.RUNNING, state={}, history=[],
                         release=False) for run_id in ("r2", "r1")]
    errors: list[BaseException] = []

    def started(call: Callable[[], Any]) -> threading.Thread:
        def reporting() -> None:
            try:
                call()
            except BaseException as error:  # reported below
                errors.append(error)
        thread = threading.Thread(target=reporting)
        thread.start()
        return thread

    with psycopg.connect(postgres_url) as other:  # r2's row is busy elsewhere for a moment
        other.execute("SELECT 1 FROM runs WHERE id = 'r2' FOR UPDATE")
        checkpointing = started(lambda: pg_store.checkpoint("w1", at(1), updates))
        assert eventually(lambda: _lock_waits(other) == 1)
        renewing = started(lambda: pg_store.renew_leases("w1", ["r1", "r2"], at(60)))
        assert eventually(lambda: _lock_waits(other) == 2)
        other.commit()
        checkpointing.join()
        renewing.join()

    assert errors == []
    assert {pg_store.get_run(run_id).due_at for run_id in ("r1", "r2")} == {at(60)}


def test_a_checkpoint_that_keeps_its_waits_leaves_them_and_their_locks_alone(
        postgres_url: str, pg_store: Store) -> None:
    wait = EventWait(wait_id="approval", type="slack.approval", match_key="k", until=at(3600))
    pg_store.create_run(new_run("r1"), [])
    pg_store.claim_run("r1", T0, "w1", at(30))
    suspend = RunUpdate(run_id="r1", status=RunStatus.WAITING, state={}, history=[],
                        due_at=at(1800), waits=(wait,))  # a reminder due before the deadline
    pg_store.checkpoint("w1", T0, [suspend])
    pg_store.claim_run("r1", at(1800), "w1", at(1830))  # a reminder: the run wakes, the wait stays

    with psycopg.connect(postgres_url) as delivery:  # a delivery holding the correlation
        delivery.execute("SELECT pg_advisory_xact_lock(hashtext('slack.approval'), hashtext('k'))")
        outcome = pg_store.checkpoint("w1", at(1801), [replace(suspend, due_at=at(3600))])
        assert outcome == {"r1": CheckpointOutcome.SAVED}  # it did not wait for the lock
        delivery.rollback()
    assert pg_store.inbox(["r1"]) == {}
    with psycopg.connect(postgres_url) as observer:
        found = observer.execute("SELECT wait_id FROM event_waits WHERE run_id = 'r1'").fetchall()
    assert found == [("approval",)]


def _waiting_for_a_lock(connection: psycopg.Connection[Any]) -> bool:
    return _lock_waits(connection) > 0


def _lock_waits(connection: psycopg.Connection[Any]) -> int:
    """How many lock requests wait on the server of ``connection``."""
    with psycopg.connect(connection.info.dsn) as observer:
        waiting = observer.execute("SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone()
    return int(waiting[0]) if waiting is not None else 0


def test_one_lock_statement_takes_every_lock_of_its_keys(postgres_url: str) -> None:
    """One statement takes the lock of each key, of either kind, the same lock a release
    that took one statement per key takes (a fleet mid-upgrade runs both)."""
    keys = [{"event_id": ["t", "e1"]}, {"event_id": ["t", "e2"]},
            {"correlation": ["t", "k1"]}, {"correlation": ["t", "k2"]}]
    taken_elsewhere = [f"pg_try_advisory_xact_lock({key})" for key in (
        "hashtextextended('t e1', 0)", "hashtextextended('t e2', 0)",
        "hashtext('t'), hashtext('k1')", "hashtext('t'), hashtext('k2')")]
    with psycopg.connect(postgres_url) as holder, psycopg.connect(postgres_url) as other:
        holder.execute(POSTGRES_QUERIES["lock_keys"], {"keys": json.dumps(keys)}).fetchall()
        assert [other.execute(f"SELECT {lock}").fetchone() for lock in taken_elsewhere] == [
            (False,)] * 4
        holder.rollback()
        assert [other.execute(f"SELECT {lock}").fetchone() for lock in taken_elsewhere] == [
            (True,)] * 4


def test_runs_and_events_at_one_instant_page_exactly_whatever_the_collation(
        postgres_server: PostgresServer) -> None:
    # Runs of every status (and events in every state) are merged from one page per status;
    # at one instant, ids (and types) order them. In an en-US collation "a" sorts before "B",
    # byte by byte after it: whatever the order, pages of one meet exactly.
    name = f"tarry_test_icu_{threading.get_ident()}"
    postgres_server.execute(f"CREATE DATABASE {name} TEMPLATE template0 "
                            f"LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'")
    try:
        store = open_store(postgres_server.url_for(name))
        try:
            for run_id, status in (("a", RunStatus.PENDING), ("B", RunStatus.HELD),
                                   ("C", RunStatus.PENDING), ("b", RunStatus.HELD)):
                store.create_run(new_run(run_id, status=status), [])
            for event_id, type, errors in (("x", "a", ("bad",)), ("x", "B", ()),
                                           ("y", "a", ()), ("Y", "a", ("bad",))):
                store.record_event(NewEvent(id=event_id, type=type, data={}, received_at=T0,
                                            match_key=None if errors else '["k"]',
                                            errors=errors), T0)
            runs = [run.id for run in store.list_runs()]
            runs_by_one = _runs_one_at_a_time(store)
            events = [(event.type, event.id) for event in store.list_events(now=T0)]
            events_by_one = _events_one_at_a_time(store)
        finally:
            store.close()
    finally:
        postgres_server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    assert sorted(runs) == ["B", "C", "a", "b"]
    assert runs_by_one == runs
    assert sorted(events) == [("B", "x"), ("a", "Y"), ("a", "x"), ("a", "y")]
    assert events_by_one == events


def _runs_one_at_a_time(store: Store) -> list[str]:
    """The ids of every run, read in pages of one."""
    ids: list[str] = []
    after = None
    while page := store.list_runs(after=after, limit=1):
        ids.append(page[0].id)
        after = (page[0].created_at, page[0].id)
    return ids


def _events_one_at_a_time(store: Store) -> list[tuple[str, str]]:
    """The (type, id) of every event, read in pages of one."""
    found: list[tuple[str, str]] = []
    after = None
    while page := store.list_events(now=T0, after=after, limit=1):
        found.append((page[0].type, page[0].id))
        after = (page[0].received_at, page[0].type, page[0].id)
    return found
