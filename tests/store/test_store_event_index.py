"""Finding the runs an event is for is an index lookup, never a scan (SPEC 3.5.5); so is
every other lookup of a send, a claim and a checkpoint.

The store is filled with 50,000 event waits (5,000 waiting runs, 20 event types), or with
20,000 recorded events, or with a modest 3,000 rows in each table a send and a checkpoint
read (where PostgreSQL once chose to scan), its statistics are refreshed (``ANALYZE``), and
the database is asked how it would run the store's own queries — the text the store loaded
from its ``.sql`` files, not a copy: SQLite's ``EXPLAIN QUERY PLAN`` and PostgreSQL's
``EXPLAIN``, of the plan for the given values or of the generic plan the server caches for
a prepared statement (``generic_plan``), which knows none.
Nothing forces the planner's hand (no ``enable_seqscan = off``): with realistic numbers of
rows it must choose the index by itself.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from tarry.clock import to_millis
from tarry.language.manifests import correlation_key
from tarry.model import NewRun, RunStatus
from tarry.store import rows
from tarry.store.base import Store
from tarry.store.sqlite import SQLiteStore
from tarry.store.sqlstore import SqlStore

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
RUNS = 5_000
WAITS_PER_RUN = 10
TYPES = 20
EVENTS = 20_000
BUFFERED_EVERY = 20
"""One event in this many is still buffered; the others were delivered."""


def event_type(number: int) -> str:
    """The event type of wait (or event) ``number``: TYPES of them, in turn."""
    return f"type.{number % TYPES}"


def key(number: int) -> str:
    """The correlation key of wait (or event) ``number``: each its own."""
    return correlation_key({"ticket": f"T-{number}"})


def run_params(number: int) -> dict[str, Any]:
    """``insert_run`` parameters of waiting run ``number``."""
    run = NewRun(id=f"run-{number:05}", flow="f", flow_digest="d", status=RunStatus.WAITING,
                 inputs={}, target=None, created_at=NOW, due_at=NOW)
    [params], _ = rows.creation_params([(run, [])])
    return params


def wait_params(number: int) -> dict[str, Any]:
    """``insert_wait`` parameters of wait ``number`` (WAITS_PER_RUN per run)."""
    return {"run_id": f"run-{number // WAITS_PER_RUN:05}", "wait_id": f"step[{number}]",
            "type": event_type(number), "match_key": key(number), "until": to_millis(NOW),
            "first_wins": number % 2 == 0}


def event_params(number: int) -> dict[str, Any]:
    """``insert_event`` parameters of event ``number``."""
    buffered = number % BUFFERED_EVERY == 0
    return {"id": f"event-{number}", "type": event_type(number),
            "state": "buffered" if buffered else "delivered",
            "data": json.dumps({"ticket": f"T-{number}"}), "match_key": key(number),
            "errors": "[]", "runs": "[]", "received_at": to_millis(NOW) + number,
            "buffer_until": to_millis(NOW) + 600_000 if buffered else None,
            "now": to_millis(NOW)}


ROW_SETS = {"insert_run", "insert_history", "insert_journal"}
"""The queries that insert their rows as one set (``Tx.insert``)."""


def analysed(store: Store, **rows_by_query: list[dict[str, Any]]) -> SqlStore:
    """``store`` with the rows inserted by the store's own queries, its statistics refreshed."""
    assert isinstance(store, SqlStore)
    with store._transaction(write=True) as tx:
        for query, param_sets in rows_by_query.items():
            (tx.insert if query in ROW_SETS else tx.many)(query, param_sets)
    with store._transaction(write=True) as tx:
        tx.cursor.execute("ANALYZE")
    return store


@pytest.fixture
def waiting(store: Store) -> SqlStore:
    """RUNS waiting runs with WAITS_PER_RUN event waits each."""
    return analysed(store, insert_run=[run_params(number) for number in range(RUNS)],
                    insert_wait=[wait_params(number) for number in range(RUNS * WAITS_PER_RUN)])


@pytest.fixture
def recorded(store: Store) -> SqlStore:
    """EVENTS recorded events, one in BUFFERED_EVERY of them still buffered."""
    return analysed(store, insert_event=[event_params(number) for number in range(EVENTS)])


def plan(store: SqlStore, query: str, params: dict[str, Any]) -> str:
    """How the database would run the store's query ``query``, as one text.

    SQLite: the ``detail`` lines of EXPLAIN QUERY PLAN; PostgreSQL: EXPLAIN's text.
    """
    sql = store._queries[query]
    sqlite = isinstance(store, SQLiteStore)
    with store._transaction(write=False) as tx:
        tx.cursor.execute(("EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN ") + sql, params)
        found = tx.cursor.fetchall()
    return "\n".join(str(row["detail"] if sqlite else row["QUERY PLAN"]) for row in found)


def test_waiting_branches_is_one_lookup_of_the_correlation_index(waiting: SqlStore) -> None:
    targets = (12_345, 3)  # one read for every correlation of a batch of sends
    params = {"keys": json.dumps([{"type": event_type(target), "match_key": key(target),
                                   "received_at": to_millis(NOW) - 1} for target in targets])}
    shown = plan(waiting, "waiting_branches", params)
    assert "event_waits_lookup" in shown, shown
    assert "SCAN event_waits" not in shown, shown          # SQLite: a full scan
    assert "Seq Scan on event_waits" not in shown, shown   # PostgreSQL: a full scan
    assert any(access in shown for access in (
        "SEARCH event_waits USING INDEX event_waits_lookup (type=? AND match_key=?)",
        "SEARCH w USING INDEX event_waits_lookup (type=? AND match_key=?)",
        "SEARCH w USING COVERING INDEX event_waits_lookup",
        "SEARCH event_waits USING COVERING INDEX event_waits_lookup",
        "Index Scan using event_waits_lookup", "Index Only Scan using event_waits_lookup",
        "Bitmap Index Scan on event_waits_lookup")), shown
    with waiting._transaction(write=False) as tx:
        found = tx.all("waiting_branches", params)
    assert [(row["type"], row["match_key"], row["run_id"], row["wait_id"]) for row in found] == [
        (event_type(3), key(3), "run-00000", "step[3]"),
        (event_type(12_345), key(12_345), "run-01234", "step[12345]")]


def test_a_send_finds_its_stored_ids_by_index(recorded: SqlStore) -> None:
    wanted = [{"type": event_type(n), "id": f"event-{n}"} for n in (7, 19_999)]
    params = {"keys": json.dumps([*wanted, {"type": "type.1", "id": "never-sent"}])}
    shown = plan(recorded, "find_events", params)
    assert "SCAN e\n" not in shown + "\n", shown       # SQLite: a full scan
    assert "Seq Scan on events" not in shown, shown     # PostgreSQL: a full scan
    assert any(access in shown for access in (
        "SEARCH e USING INDEX sqlite_autoindex_events_1 (type=? AND id=?)",
        "Index Scan using events_pkey", "Index Scan using events_id ")), shown
    with recorded._transaction(write=False) as tx:
        found = tx.all("find_events", params)
    assert sorted(row["id"] for row in found) == ["event-19999", "event-7"]


def test_a_registering_wait_finds_a_buffered_event_by_the_buffered_index(
        recorded: SqlStore) -> None:
    target = 4 * BUFFERED_EVERY
    shown = plan(recorded, "oldest_buffered", {"type": event_type(target),
                                               "match_key": key(target), "now": to_millis(NOW),
                                               "until": to_millis(NOW) + 86_400_000})
    assert "events_buffered" in shown, shown
    assert "SCAN events" not in shown, shown
    assert "Seq Scan on events" not in shown, shown


MODEST = 3_000
"""Rows per table in ``modest``: few enough that a scan looks cheaper to PostgreSQL's planner
than the 100 index lookups it guesses a JSON array of keys holds (a plain ``IN`` or join on
one scanned every row: a send cost 6-9 ms with 10,000 events stored); too many to scan
per call."""


@pytest.fixture
def modest(store: Store) -> SqlStore:
    """MODEST waiting runs, each with one event wait, one history, journal and inbox entry,
    and MODEST recorded events."""
    return filled_modestly(store)


def filled_modestly(store: Store) -> SqlStore:
    """``store`` with the rows of :func:`modest`."""
    numbers = range(MODEST)
    return analysed(
        store, insert_run=[run_params(number) for number in numbers],
        insert_wait=[wait_params(number * WAITS_PER_RUN) for number in numbers],
        insert_journal=[{"run_id": f"run-{number:05}", "scope": "", "key": "step",
                         "value": "{}"} for number in numbers],
        insert_inbox=[{"run_id": f"run-{number:05}", "wait_id": "step", "event_type": "t",
                       "event_id": f"event-{number}", "data": "{}",
                       "received_at": to_millis(NOW)} for number in numbers],
        insert_history=[{"run_id": f"run-{number:05}", "at": to_millis(NOW), "kind": "k",
                         "step": None, "data": "{}"} for number in numbers],
        insert_event=[event_params(number) for number in numbers],
        insert_throttle_turn=[{"flow": "f", "key": f"k{number % 100}",
                               "turn": to_millis(NOW) + number, "run_id": f"run-{number:05}"}
                              for number in numbers],
        save_debounce=[{"trigger": "f#0", "key": f"k{number}", "flow": "f",
                        "run_id": f"run-{number:05}", "first_at": to_millis(NOW),
                        "last_at": to_millis(NOW), "fire_at": to_millis(NOW) + number,
                        "events": 1} for number in numbers])


@pytest.mark.parametrize(("query", "table"), [
    ("inbox_of_runs", "inbox"), ("waits_of_runs", "event_waits"),
    ("registered_waits", "event_waits"), ("journal_of_runs", "run_journal")])
def test_the_rows_of_a_batch_of_runs_are_index_lookups_whatever_the_table_holds(
        modest: SqlStore, query: str, table: str) -> None:
    params = {"ids": json.dumps(["run-00007", "run-02999", "run-00007", "never"])}
    shown = plan(modest, query, params)
    assert f"SCAN {table}" not in shown, shown            # SQLite: a full scan
    assert f"Seq Scan on {table}" not in shown, shown     # PostgreSQL: a full scan
    with modest._transaction(write=False) as tx:
        found = tx.all(query, params)
    assert len(found) == 2
    if "run_id" in found[0]:
        assert sorted(row["run_id"] for row in found) == ["run-00007", "run-02999"]


def test_a_send_finds_its_stored_ids_by_index_among_few(modest: SqlStore) -> None:
    params = {"keys": json.dumps([{"type": event_type(n), "id": f"event-{n}"}
                                  for n in (7, 2_999)])}
    shown = plan(modest, "find_events", params)
    assert "SCAN e\n" not in shown + "\n", shown
    assert "Seq Scan on events" not in shown, shown
    with modest._transaction(write=False) as tx:
        found = tx.all("find_events", params)
    assert sorted(row["id"] for row in found) == ["event-2999", "event-7"]


def test_a_lease_renewal_finds_its_runs_by_key_whatever_the_table_holds(
        modest: SqlStore) -> None:
    params = {"ids": json.dumps(["run-00007", "run-02999"]), "worker": "w", "lease_until": 1}
    shown = plan(modest, "renew_leases", params)
    assert "SCAN runs" not in shown, shown               # SQLite: a full scan
    assert "Seq Scan on runs" not in shown, shown        # PostgreSQL: a full scan


PLACEHOLDER = re.compile(r"%\((\w+)\)[sb]")
"""A named parameter in the PostgreSQL store's queries (sent as text, or in binary)."""


def generic_plan(url: str, sql: str) -> str:
    """How the PostgreSQL server at ``url`` runs ``sql`` (a query of the store) once it is
    prepared and its plan cached: a generic plan, made without the parameters' values."""
    names = list(dict.fromkeys(PLACEHOLDER.findall(sql)))
    numbered = PLACEHOLDER.sub(lambda found: f"${names.index(found[1]) + 1}", sql)
    nulls = f" ({', '.join(['NULL'] * len(names))})" if names else ""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("SET plan_cache_mode = force_generic_plan")
        connection.execute(f"PREPARE generic AS {numbered}")
        return "\n".join(str(row[0]) for row in connection.execute(
            f"EXPLAIN EXECUTE generic{nulls}"))


def test_a_claim_looks_up_a_waiting_runs_own_event_waits_and_tasks(modest: SqlStore,
                                                                    store_url: str) -> None:
    """A run due within the look-ahead but not yet due is claimed early only if no event
    wait nor open task can reach it first: that check reads the run's own rows by index,
    never the whole table (a hashed subplan scanned every event wait in each such claim), and
    the claim leases its runs by key (a hash join scanned every run)."""
    now = to_millis(NOW) - 10
    params = {"now": now, "ahead": now + 50, "limit": 64, "worker": "w", "lease_until": now}
    if isinstance(modest, SQLiteStore):
        shown = plan(modest, "due_runs", params)
        assert "SCAN event_waits" not in shown, shown
        assert "SCAN tasks" not in shown, shown
    else:
        shown = generic_plan(store_url, modest._queries["claim_due_runs_with_inbox"])
        assert "Seq Scan on event_waits" not in shown, shown
        assert "hashed SubPlan" not in shown, shown
        assert "Seq Scan on runs" not in shown, shown  # the lease's update, joined by hash
    with modest._transaction(write=True) as tx:  # due within the look-ahead, each with a wait
        assert tx.all("due_runs" if isinstance(modest, SQLiteStore)
                      else "claim_due_runs_with_inbox", params) == []


SCANNING_BY_DESIGN = {
    **dict.fromkeys(("count_runs", "count_runs_by_flow", "count_runs_by_status",
                     "count_runs_by_status_and_flow", "count_runs_per_status",
                     "count_runs_per_step"),
                    "a count reads every row it counts (here all 3,000 runs have one status "
                    "and one flow, so an index leads to every row)"),
    "count_settled_events": "a dry run of retention counts the settled events that expired: "
                            "most of the table, read either way",
    **dict.fromkeys(("list_runs_by_flow",),
                    "a listing reads its index newest first until a page is full; with its "
                    "filters optional, PostgreSQL's generic plan scans, and costs the server "
                    "hundreds of times more than the plans it makes with the values, so it "
                    "keeps making those"),
}
"""Queries whose plan may scan a table, and why that is no hazard."""

_SCANNED = "runs|event_waits|inbox|events|run_journal|history|throttle_turns|debounces"
SCANS = {"sqlite": re.compile(rf"SCAN ({_SCANNED})\b"),
         "postgresql": re.compile(rf"Seq Scan on ({_SCANNED})\b")}
"""A plan's line that reads a whole table a send or a worker reads, by backend."""


def test_no_query_scans_a_table_a_send_or_a_worker_reads(modest: SqlStore,
                                                         store_url: str) -> None:
    """Every store query finds its rows in the modest tables by index, as its database would
    run it: SQLite's plan of the statement (made without the parameters' values), and the
    generic plan PostgreSQL caches for a prepared statement. None scans ``runs``,
    ``event_waits``, ``inbox``, ``events``, ``run_journal``, ``history``, ``throttle_turns``
    or ``debounces`` (but the few in SCANNING_BY_DESIGN)."""
    sqlite = isinstance(modest, SQLiteStore)

    def plan_of(name: str) -> str:
        sql = modest._queries[name]
        if not sqlite:
            return generic_plan(store_url, sql)
        return plan(modest, name, dict.fromkeys(re.findall(r":(\w+)", sql)))

    scanned = SCANS["sqlite" if sqlite else "postgresql"]
    scans = {name: found for name, sql in sorted(modest._queries.items())
             if name not in SCANNING_BY_DESIGN
             and re.match(r"\s*(WITH|SELECT|UPDATE|DELETE|INSERT)", sql)
             and (found := scanned.findall(plan_of(name)))}
    assert scans == {}
