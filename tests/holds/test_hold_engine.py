"""Holds through the real engine and store, on a virtual clock, with real check scripts.

Every test runs on SQLite and PostgreSQL. The clock is virtual (a day of holding takes a
moment); the checks are real executables written into ``tmp_path``, so the contract is
exercised as a worker exercises it. The jitter is pinned to zero unless a test says otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hold_support import T0, NoJitter, at, script

from tarry.config import Limits
from tarry.errors import RunError
from tarry.model import RunStatus
from tarry.testing import Harness

pytestmark = pytest.mark.slow  # real check processes

MINUTE = timedelta(minutes=1)



def held_flow(*conditions: str) -> str:
    """A flow held on ``conditions`` (YAML list items) that logs once it starts."""
    hold = "".join(f"\n  - {condition}" for condition in conditions)
    return f"flow: deploy\nhold:{hold}\nsteps:\n  - go: {{ log: started }}\n"


Build = Callable[..., Harness]


@pytest.fixture
def build(tmp_path: Path, store_url: str) -> Iterator[Build]:
    """Makes a harness whose checks are the given ``name=shell body`` scripts."""
    made: list[Harness] = []

    def make(limits: Limits | None = None, **checks: str) -> Harness:
        paths = {name: script(tmp_path / "checks", f"{name}.sh", body)
                 for name, body in checks.items()}
        harness = Harness(tmp_path / f"h{len(made)}", start=T0, store_url=store_url,
                          checks=paths, limits=limits)
        harness.engine.holds.rng = NoJitter()
        harness.engine.holds.runner.grace = timedelta(milliseconds=300)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


def checks_of(harness: Harness, run_id: str) -> list[dict[str, Any]]:
    """The ``hold.check`` entries of a run: instant and data."""
    return [{"at": e["at"], **e["data"]} for e in harness.document(run_id)["history"]
            if e["kind"] == "hold.check"]


def entries(harness: Harness, run_id: str, kind: str) -> list[dict[str, Any]]:
    """The history entries of one kind."""
    return [e for e in harness.document(run_id)["history"] if e["kind"] == kind]


def stamp(instant: datetime) -> str:
    """The run document's spelling of an instant."""
    return instant.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- after -----------------------------------------------------------------------------------


async def test_an_after_wakes_the_run_at_exactly_its_instant(build: Build) -> None:
    harness = build()
    run = harness.start(harness.flow(held_flow('after: "2026-01-01T12:30:00Z"')))

    record = harness.record(run)
    assert (record.status, record.due_at) == (RunStatus.HELD, at(3.5 * 3600))
    await harness.run_until_idle()

    assert harness.record(run).status is RunStatus.SUCCEEDED
    assert [(e["kind"], e["at"]) for e in harness.document(run)["history"][1:3]] == [
        ("hold.cleared", "2026-01-01T12:30:00.000Z"), ("started", "2026-01-01T12:30:00.000Z")]
    assert harness.engine.holds.runner.spawned == 0


async def test_an_after_not_reached_costs_no_check(build: Build) -> None:
    harness = build(jira="exit 0")
    run = harness.start(harness.flow(held_flow('after: "2026-01-01T10:00:00Z"', "check: jira")))

    await harness.run_until(at(3600) - timedelta(milliseconds=1))
    assert harness.engine.holds.runner.spawned == 0
    await harness.run_until(at(3600))

    assert [c["at"] for c in checks_of(harness, run)] == ["2026-01-01T10:00:00.000Z"]
    assert harness.record(run).status is RunStatus.SUCCEEDED


async def test_a_held_run_says_what_it_waits_for(build: Build) -> None:
    harness = build(jira="exit 3")
    run = harness.start(harness.flow(held_flow("check: jira")), target="acme/web#7")
    await harness.run_due()

    document = harness.document(run)

    assert document["status"] == "held"
    assert document["waiting_for"] == {
        "kind": "hold", "step": None, "until": "2026-01-01T09:01:00.000Z", "event_type": None,
        "match": None, "conditions": [{"check": "jira", "clear": False}],
        "since": "2026-01-01T09:00:00.000Z", "rounds": 1, "expires": "2026-01-02T09:00:00.000Z",
        "faults": {}, "fault_limit": 5,
        "explanation": "held before its first step since 2026-01-01T09:00:00.000Z until "
                       "2026-01-01T09:01:00.000Z; then checks its hold again"}


# -- the check contract through the gate -----------------------------------------------------


async def test_go_clears_and_the_first_step_runs_in_the_same_claim(build: Build) -> None:
    harness = build(jira="exit 0")
    run = harness.start(harness.flow(held_flow("check: jira")), target="acme/web#7")

    assert await harness.run_due() == 1

    kinds = [(e["kind"], e["at"]) for e in harness.document(run)["history"]]
    assert [kind for kind, _ in kinds] == ["created", "hold.check", "hold.cleared", "started",
                                           "step.started", "log", "step.completed", "succeeded"]
    assert {instant for _, instant in kinds} == {"2026-01-01T09:00:00.000Z"}
    assert entries(harness, run, "hold.cleared")[0]["data"] == {
        "conditions": [{"check": "jira", "clear": True}], "rounds": 1}


async def test_the_check_gets_the_target_or_else_the_run_id(build: Build,
                                                            tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    harness = build(Limits(check_slots=2), jira=f'printf "%s\\n" "$1" >> "{seen}"; exit 0')
    flow = harness.flow(held_flow("check: jira"))
    with_target = harness.start(flow, target="acme/web#7")
    without = harness.start(flow)

    await harness.run_due()

    assert sorted(seen.read_text().split()) == sorted(["acme/web#7", without])
    assert with_target != without


async def test_not_yet_holds_and_asks_again_at_the_interval(build: Build) -> None:
    harness = build(jira="exit 3")
    run = harness.start(harness.flow(held_flow("check: jira")))

    await harness.run_until(T0 + 3 * MINUTE)

    assert [(c["at"], c["outcome"], c["exit"]) for c in checks_of(harness, run)] == [
        (stamp(T0 + n * MINUTE), "not_yet", 3) for n in range(4)]
    record = harness.record(run)
    assert (record.status, record.due_at) == (RunStatus.HELD, T0 + 4 * MINUTE)


async def test_never_refuses_the_run_for_good(build: Build) -> None:
    harness = build(jira="exit 2")
    run = harness.start(harness.flow(held_flow("check: jira")))

    await harness.run_until_idle()

    record = harness.record(run)
    assert (record.status, record.reason, record.due_at) == (
        RunStatus.REFUSED, "hold-refused", None)
    assert entries(harness, run, "refused")[0]["data"] == {"reason": "hold-refused",
                                                          "check": "jira"}
    assert harness.engine.holds.runner.spawned == 1


async def test_the_pipeline_trap_is_refused_unanswerable_after_five_faults(build: Build) -> None:
    harness = build(jira="printf 'Status: In Review\\n' | grep -q '^Status: Done'")
    run = harness.start(harness.flow(held_flow("check: jira")))

    await harness.run_until_idle()

    assert [(c["at"], c["outcome"], c["exit"]) for c in checks_of(harness, run)] == [
        (stamp(T0 + n * MINUTE), "unknown", 1) for n in range(5)]
    record = harness.record(run)
    assert (record.status, record.reason) == (RunStatus.REFUSED, "hold-unanswerable")
    assert entries(harness, run, "refused")[0]["data"] == {
        "reason": "hold-unanswerable", "check": "jira", "faults": 5}


async def test_a_crash_is_a_fault_recorded_with_its_signal(build: Build) -> None:
    harness = build(jira="kill -SEGV $$")
    run = harness.start(harness.flow(held_flow("check: jira")))

    await harness.run_due()

    [check] = checks_of(harness, run)
    assert (check["outcome"], check["exit"], check["signal"]) == ("unknown", None, 11)
    assert harness.record(run).state["hold"]["faults"] == {"jira": 1}


async def test_a_check_past_its_timeout_is_a_fault(build: Build) -> None:
    harness = build(Limits(check_timeout=timedelta(milliseconds=200)), jira="exec sleep 10")
    run = harness.start(harness.flow(held_flow("check: jira")))

    await harness.run_due()

    [check] = checks_of(harness, run)
    assert (check["outcome"], check["timed_out"], check["signal"]) == ("unknown", True, 15)


async def test_conditions_clear_one_by_one_and_a_go_is_never_asked_again(
        build: Build, tmp_path: Path) -> None:
    flag = tmp_path / "ci-green"
    harness = build(jira="exit 0", ci=f'test -e "{flag}" && exit 0; exit 3')
    run = harness.start(harness.flow(held_flow("check: jira", "check: ci")))

    await harness.run_until(T0 + MINUTE)
    flag.touch()
    await harness.run_until_idle()

    assert [(c["check"], c["outcome"]) for c in checks_of(harness, run)] == [
        ("jira", "go"), ("ci", "not_yet"), ("ci", "not_yet"), ("ci", "go")]
    assert harness.record(run).status is RunStatus.SUCCEEDED


# -- the bounds, on the virtual clock ----------------------------------------------------------


async def test_at_the_defaults_the_96th_check_ends_the_hold(build: Build) -> None:
    harness = build(jira="exit 3")
    run = harness.start(harness.flow(held_flow("check: jira")))

    await harness.run_until_idle()

    checks = checks_of(harness, run)
    record = harness.record(run)
    assert len(checks) == 96
    assert checks[-1]["at"] == stamp(T0 + timedelta(hours=19, minutes=40))
    assert (record.status, record.reason) == (RunStatus.REFUSED, "hold-expired")
    assert entries(harness, run, "refused")[0] == {
        "at": stamp(T0 + timedelta(hours=19, minutes=40)), "kind": "refused", "step": None,
        "data": {"reason": "hold-expired", "rounds": 96, "held": "19h40m"}}


async def test_the_96th_check_saying_go_still_starts_the_run(build: Build,
                                                            tmp_path: Path) -> None:
    flag = tmp_path / "done"
    harness = build(jira=f'test -e "{flag}" && exit 0; exit 3')
    run = harness.start(harness.flow(held_flow("check: jira")))
    last = T0 + timedelta(hours=19, minutes=40)

    await harness.run_until(last - timedelta(milliseconds=1))
    assert len(checks_of(harness, run)) == 95
    flag.touch()
    await harness.run_until_idle()

    assert len(checks_of(harness, run)) == 96
    assert entries(harness, run, "hold.cleared")[0]["at"] == stamp(last)
    assert harness.record(run).status is RunStatus.SUCCEEDED


async def test_the_last_check_runs_at_the_end_of_the_hold_then_expires(build: Build) -> None:
    harness = build(Limits(check_max=1000), jira="exit 3")
    run = harness.start(harness.flow(held_flow("check: jira")))

    await harness.run_until_idle()

    checks = checks_of(harness, run)
    assert checks[-1]["at"] == stamp(T0 + timedelta(hours=24))
    assert stamp(T0 + timedelta(hours=23, minutes=45)) < checks[-2]["at"]
    refused = entries(harness, run, "refused")[0]
    assert (refused["at"], refused["data"]["reason"]) == (checks[-1]["at"], "hold-expired")


async def test_a_check_clearing_at_the_final_moment_of_the_hold_starts_the_run(
        build: Build, tmp_path: Path) -> None:
    flag = tmp_path / "done"
    harness = build(Limits(check_max=1000), jira=f'test -e "{flag}" && exit 0; exit 3')
    run = harness.start(harness.flow(held_flow("check: jira")))

    await harness.run_until(T0 + timedelta(hours=24) - timedelta(milliseconds=1))
    flag.touch()
    await harness.run_until_idle()

    assert entries(harness, run, "hold.cleared")[0]["at"] == stamp(T0 + timedelta(hours=24))
    assert harness.record(run).status is RunStatus.SUCCEEDED


async def test_the_hold_clock_starts_at_the_first_check_not_at_creation(build: Build) -> None:
    harness = build(Limits(hold_max=timedelta(hours=1)), jira="exit 3")
    run = harness.start(harness.flow(held_flow('after: "2026-01-01T19:00:00Z"', "check: jira")))

    await harness.run_until_idle()

    checks = checks_of(harness, run)
    assert (checks[0]["at"], checks[-1]["at"]) == ("2026-01-01T19:00:00.000Z",
                                                   "2026-01-01T20:00:00.000Z")


# -- refusals at start -----------------------------------------------------------------------


async def test_an_undeclared_check_refuses_the_run_at_start(build: Build) -> None:
    harness = build(jira="exit 0")
    run = harness.start(harness.flow(held_flow("check: linear")), target="acme/web#7")

    record = harness.record(run)
    assert (record.status, record.reason, record.due_at) == (
        RunStatus.REFUSED, "check-unknown", None)
    assert [(e["kind"], e["data"]) for e in harness.document(run)["history"]] == [
        ("created", {"target": "acme/web#7", "hold": [{"check": "linear", "clear": False}]}),
        ("refused", {"reason": "check-unknown", "check": "linear"})]
    await harness.run_until_idle()
    assert harness.engine.holds.runner.spawned == 0


async def test_a_check_undeclared_after_the_start_refuses_at_the_gate(build: Build) -> None:
    harness = build(jira="exit 0")
    run = harness.start(harness.flow(held_flow("check: jira")))
    harness.engine.holds.checks.clear()  # the operator removed it meanwhile

    await harness.run_due()

    assert (harness.record(run).status, harness.record(run).reason) == (
        RunStatus.REFUSED, "check-unknown")
    assert harness.engine.holds.runner.spawned == 0


@pytest.mark.parametrize("source", ["flow", "start"])
async def test_an_after_beyond_the_maximum_refuses_the_run(build: Build, source: str) -> None:
    harness = build()
    later = T0 + timedelta(days=30, milliseconds=1)
    if source == "flow":
        run = harness.start(harness.flow(held_flow('after: "2026-01-31T09:00:00.001Z"')))
    else:
        run = harness.start(harness.flow("flow: deploy\nsteps:\n  - go: { log: hi }\n"),
                            hold_after=later)

    record = harness.record(run)
    assert (record.status, record.reason) == (RunStatus.REFUSED, "hold-after-beyond-max")
    assert entries(harness, run, "refused")[0]["data"] == {
        "reason": "hold-after-beyond-max", "after": "2026-01-31T09:00:00.001Z", "max": "4w2d"}


async def test_an_after_at_exactly_the_maximum_is_held(build: Build) -> None:
    harness = build()
    run = harness.start(harness.flow(held_flow('after: "2026-01-31T09:00:00Z"')))

    assert harness.record(run).status is RunStatus.HELD


# -- --hold-after ------------------------------------------------------------------------------


async def test_hold_after_holds_a_flow_without_a_hold(build: Build) -> None:
    harness = build()
    run = harness.start(harness.flow("flow: deploy\nsteps:\n  - go: { log: hi }\n"),
                        hold_after=at(600))

    assert (harness.record(run).status, harness.record(run).due_at) == (RunStatus.HELD, at(600))
    await harness.run_until_idle()
    assert entries(harness, run, "started")[0]["at"] == stamp(at(600))


async def test_hold_after_joins_the_flows_checks(build: Build) -> None:
    harness = build(jira="exit 0")
    run = harness.start(harness.flow(held_flow("check: jira")), hold_after=at(600))

    assert harness.record(run).waiting_for["conditions"] == [  # type: ignore[index]
        {"after": stamp(at(600))}, {"check": "jira", "clear": False}]


@pytest.mark.parametrize(("conditions", "message"), [
    (('after: "2026-01-01T10:00:00Z"',),
     "flow 'deploy' already holds its runs until 2026-01-01T10:00:00.000Z; a hold has at most "
     "one 'after', so --hold-after cannot add another"),
    (("check: a", "check: b", "check: c", "check: d"),
     "flow 'deploy' already has 4 hold conditions; a hold has at most 4, so --hold-after "
     "cannot add one"),
])
async def test_hold_after_cannot_make_a_second_after_or_a_fifth_condition(
        build: Build, conditions: tuple[str, ...], message: str) -> None:
    harness = build()

    with pytest.raises(RunError) as caught:
        harness.start(harness.flow(held_flow(*conditions)), hold_after=at(600))

    assert str(caught.value) == message
    assert harness.engine.store.list_runs() == []


async def test_hold_after_needs_a_zone(build: Build) -> None:
    harness = build()

    with pytest.raises(RunError) as caught:
        harness.start(harness.flow(held_flow("check: a")), hold_after=datetime(2026, 1, 2, 9))

    assert str(caught.value) == ("--hold-after needs an instant with a zone (such as "
                                 "2026-01-02T09:00:00Z), got 2026-01-02T09:00:00")


# -- supersede -------------------------------------------------------------------------------


async def test_a_second_start_of_a_held_target_is_refused_superseded(build: Build) -> None:
    harness = build(jira="exit 3")
    flow = harness.flow(held_flow("check: jira"))
    first = harness.start(flow, target="acme/web#7")

    second = harness.start(flow, target="acme/web#7")

    record = harness.record(second)
    assert (record.status, record.reason) == (RunStatus.REFUSED, "hold-superseded")
    assert entries(harness, second, "refused")[0]["data"] == {"reason": "hold-superseded",
                                                             "sibling": first}
    assert harness.record(harness.start(flow, target="acme/web#8")).status is RunStatus.HELD


async def test_a_start_within_fifteen_minutes_of_a_clear_is_superseded(build: Build) -> None:
    harness = build(jira="exit 0")
    flow = harness.flow("flow: deploy\nhold:\n  - check: jira\nsteps:\n"
                        "  - nap: { wait: { for: 1h } }\n")
    harness.start(flow, target="acme/web#7")
    await harness.run_due()  # cleared at T0

    await harness.run_until(T0 + timedelta(minutes=14, seconds=59))
    refused = harness.start(flow, target="acme/web#7")
    await harness.run_until(T0 + timedelta(minutes=15))
    admitted = harness.start(flow, target="acme/web#7")

    assert harness.record(refused).reason == "hold-superseded"
    assert harness.record(admitted).status is RunStatus.HELD


async def test_a_cancelled_held_sibling_supersedes_nothing(build: Build) -> None:
    harness = build(jira="exit 3")
    flow = harness.flow(held_flow("check: jira"))
    first = harness.start(flow, target="acme/web#7")

    cancelled = harness.engine.cancel(first, by="ada")

    assert cancelled.status is RunStatus.CANCELLED
    assert harness.record(harness.start(flow, target="acme/web#7")).status is RunStatus.HELD


async def test_a_refused_sibling_supersedes_nothing(build: Build) -> None:
    harness = build(jira="exit 2")
    flow = harness.flow(held_flow("check: jira"))
    harness.start(flow, target="acme/web#7")
    await harness.run_due()  # refused hold-refused

    assert harness.record(harness.start(flow, target="acme/web#7")).status is RunStatus.HELD


# -- slots -----------------------------------------------------------------------------------


async def test_a_run_denied_a_slot_spawns_nothing_and_comes_back_later(
        build: Build, caplog: pytest.LogCaptureFixture) -> None:
    harness = build(jira="exit 0")
    store = harness.engine.store
    assert store.acquire_check_slot("elsewhere", T0, T0 + timedelta(hours=1), 1)
    run = harness.start(harness.flow(held_flow("check: jira")))
    caplog.set_level(logging.WARNING, "tarry.holds")

    for wake in range(4):
        await harness.run_until(T0 + wake * timedelta(seconds=15))

    assert harness.engine.holds.runner.spawned == 0
    record = harness.record(run)
    assert (record.status, record.due_at) == (RunStatus.HELD, T0 + timedelta(seconds=60))
    assert record.state["hold"]["denials"] == 4
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["check-capacity-exceeded"]
    assert f"run {run} was denied a check slot 4 times in a row" in caplog.text

    store.release_check_slot("elsewhere")
    await harness.run_until(T0 + timedelta(seconds=60))
    assert harness.record(run).status is RunStatus.SUCCEEDED


async def test_the_gate_gives_its_slot_back(build: Build) -> None:
    harness = build(jira="exit 3")
    harness.start(harness.flow(held_flow("check: jira")))

    await harness.run_due()

    assert harness.engine.store.acquire_check_slot("next", T0, at(30), 1)


# -- secrets, cancel, recovery -------------------------------------------------------------------


async def test_a_check_that_prints_a_secret_leaves_it_nowhere(
        build: Build, store_url: str, caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    secret = "sk-live-7c1e5d0f9b"
    harness = build(jira=f"echo {secret}; echo {secret} >&2; exit 3")
    caplog.set_level(logging.DEBUG, "tarry")
    run = harness.start(harness.flow(held_flow("check: jira")), target="acme/web#7")

    await harness.run_until(T0 + 2 * MINUTE)

    assert [c["stdout_bytes"] for c in checks_of(harness, run)] == [19, 19, 19]
    assert secret not in str(harness.document(run))
    assert secret not in caplog.text
    assert f"check jira for run {run}: not_yet (exit 3)" in caplog.text
    assert secret not in stored_text(store_url, tmp_path)


def stored_text(store_url: str, tmp_path: Path) -> str:
    """Everything the store holds, as text: the SQLite files' bytes, or every PostgreSQL
    table's rows."""
    if store_url.startswith("sqlite:///"):
        return "".join(path.read_bytes().decode("latin-1") for path in tmp_path.rglob("*.db*"))
    import psycopg  # noqa: PLC0415

    with psycopg.connect(store_url) as connection:
        tables = [row[0] for row in connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        return "".join(str(connection.execute(f"SELECT t::text FROM {table} t").fetchall())
                       for table in tables)


async def test_cancelling_a_held_run_ends_it_at_once(build: Build) -> None:
    harness = build(jira="exit 3")
    run = harness.start(harness.flow(held_flow("check: jira")))
    await harness.run_due()

    record = harness.engine.cancel(run, by="ada")

    assert (record.status, record.due_at, record.cancelled_by) == (
        RunStatus.CANCELLED, None, "ada")
    await harness.run_until_idle()
    assert len(checks_of(harness, run)) == 1


async def test_a_held_run_whose_worker_died_is_gated_again(build: Build) -> None:
    harness = build(jira="exit 0")
    run = harness.start(harness.flow(held_flow("check: jira")))
    store = harness.engine.store
    assert store.claim_run(run, T0, "dead-worker", T0 + timedelta(seconds=30)) is not None

    await harness.run_until_idle()

    kinds = [e["kind"] for e in harness.document(run)["history"]]
    # its first worker died before the run started: its start is recorded now, with the takeover
    assert kinds[:5] == ["created", "hold.check", "hold.cleared", "started", "recovered"]
    assert harness.record(run).status is RunStatus.SUCCEEDED
