"""Checkpoints cost what changed: completed bindings and operations go to the run's journal
once, the run row keeps the live path, and a resume reads back only what it needs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry import App, Context
from tarry.engine.journal import (
    BINDINGS,
    BRANCHES,
    DONE,
    ITEMS,
    OPS,
    OpsJournal,
    names_ahead,
    whole_state,
)
from tarry.language.loader import parse_flow
from tarry.model import JournalEntry, RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def long_flow(steps: int) -> str:
    body = "".join(f"  - s{i}: {{ set: {{ v: {i}, pad: \"{'x' * 100}\" }} }}\n"
                   for i in range(steps))
    return ("flow: long\nsteps:\n" + body + "  - nap: { wait: { for: 1h } }\n"
            "  - last: { set: { first: \"{{ s0.v }}\" } }\n")


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    h = Harness(tmp_path, start=START, store_url=store_url)
    yield h
    h.close()


def _state_bytes(harness: Harness, run_id: str) -> int:
    return len(json.dumps(harness.record(run_id).state))


async def test_the_run_row_keeps_the_live_path_and_the_journal_what_completed(
        harness: Harness) -> None:
    small, large = (harness.start(harness.flow(long_flow(n))) for n in (3, 60))
    await harness.run_due()
    assert _state_bytes(harness, large) <= _state_bytes(harness, small) + 1  # "at": 4 / 62
    entries = harness.engine.store.journals([large])[large]
    assert [(e.scope, e.key) for e in entries] == [(BINDINGS, f"s{i}") for i in range(60)]
    assert harness.document(large)["bindings"]["s59"] == {"v": 59, "pad": "x" * 100}


async def test_a_resume_reads_only_the_bindings_the_steps_ahead_name(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = harness.start(harness.flow(long_flow(20)))
    await harness.run_due()
    reads: list[dict[str, Any]] = []
    store = harness.engine.store
    original = store.read_journal

    def counted(run: str, **query: Any) -> list[JournalEntry]:
        found = original(run, **query)
        reads.append({**query, "found": [entry.key for entry in found]})
        return found

    monkeypatch.setattr(store, "read_journal", counted)
    await harness.advance(timedelta(hours=1))
    assert [read["found"] for read in reads] == [["s0"]]
    document = harness.document(run_id)
    assert document["status"] == "succeeded"
    assert document["bindings"]["last"] == {"first": 0}
    assert len(document["bindings"]) == 22


def test_names_ahead_are_those_the_steps_not_yet_run_read_and_earlier_steps_bound() -> None:
    parsed = parse_flow(long_flow(3), "long.yaml")
    assert names_ahead(parsed.body, 0, recovering=False) == frozenset()  # s0 not yet bound
    assert names_ahead(parsed.body, 1, recovering=False) == frozenset({"s0"})
    assert names_ahead(parsed.body, 4, recovering=False) == frozenset({"s0"})
    assert names_ahead(parsed.body, 5, recovering=False) == frozenset()


RECOVERING = """
flow: recovering
steps:
  - fetch: { set: { url: x } }
  - call: { fail: boom }
recover:
  - note: { set: { seen: "{{ fetch.url }}" } }
  - tell: { log: { message: "{{ note.seen }}" } }
"""


def test_recovering_any_main_step_and_the_recover_steps_before_may_be_read() -> None:
    parsed = parse_flow(RECOVERING, "recovering.yaml")
    assert names_ahead(parsed.body, 0, recovering=True) == frozenset({"fetch"})
    assert names_ahead(parsed.body, 1, recovering=True) == frozenset({"note"})


async def test_a_run_waiting_at_its_first_step_resumes_without_reading_its_journal(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = harness.start(harness.flow(
        "flow: nap\nsteps:\n  - nap: { wait: { for: 1h } }\n  - done: { set: { v: 1 } }\n"))
    await harness.run_due()
    reads: list[str] = []
    store = harness.engine.store
    original = store.read_journal

    def counted(run: str, **query: Any) -> list[JournalEntry]:
        reads.append(run)
        return original(run, **query)

    monkeypatch.setattr(store, "read_journal", counted)
    await harness.advance(timedelta(hours=1))
    assert harness.document(run_id)["status"] == "succeeded"
    assert reads == []


def _sdk_app(steps: int) -> App:
    app = App()

    @app.flow("many")
    async def many(ctx: Context) -> int:
        total = 0
        for index in range(steps):
            total += await ctx.step(f"s{index}", lambda i=index: i)
        await ctx.wait("nap", "1h")
        return total

    return app


async def test_a_python_flow_journals_each_finished_operation_once(
        tmp_path: Path, store_url: str) -> None:
    h = Harness(tmp_path, start=START, store_url=store_url, app=_sdk_app(30))
    try:
        run_id = h.start("many")
        await h.run_due()
        live = h.record(run_id).state["journal"]
        assert live == {"ops": {"nap": live["ops"]["nap"]}, "order": {"": [["wait", "nap"]]}}
        entries = h.engine.store.journals([run_id])[run_id]
        assert [(e.scope, e.key) for e in entries] == [(OPS, f"s{i}") for i in range(30)]
        await h.advance(timedelta(hours=1))
        record = h.record(run_id)
        assert (record.status, record.result) == (RunStatus.SUCCEEDED, sum(range(30)))
        assert [e.key for e in h.engine.store.journals([run_id])[run_id]][-1] == "nap"
    finally:
        h.close()


def test_operations_are_sealed_in_call_order_and_restored_exactly() -> None:
    state: dict[str, Any] = {"journal": {
        "ops": {"a": {"result": 1}, "fan": {"branches": 2, "done": {"0": 5}},
                "fan[0].x": {"result": 5}, "fan[1].x": {"until": "2026-03-01T10:00:00.000Z"},
                "b": {"value": 0.5}},
        "order": {"": [["step", "a"], ["map", "fan"], ["random", "b"]],
                  "fan[0].": [["step", "x"]], "fan[1].": [["wait", "x"]]}}}
    before = json.loads(json.dumps(state))
    live, entries = OpsJournal().split(state)
    assert [(entry.scope, entry.key) for entry in entries] == [
        (BRANCHES, "fan[0]"), (OPS, "a"), (OPS, "fan[0].x")]  # 'b' waits behind 'fan'
    assert json.loads(live)["journal"]["order"] == {
        "": [["map", "fan"], ["random", "b"]], "fan[1].": [["wait", "x"]]}
    assert json.loads(live)["journal"]["ops"]["fan"] == {"branches": 2, "done": {}}
    stored = [JournalEntry(e.scope, e.key, json.loads(e.value)) for e in entries]
    assert whole_state(json.loads(live), stored) == before


def test_a_branch_result_is_journaled_once_and_put_back_in_its_place() -> None:
    journal = OpsJournal()
    fan: dict[str, Any] = {"branches": 3, "done": {"1": "b"}}
    state: dict[str, Any] = {"journal": {"ops": {"fan": fan}, "order": {"": [["map", "fan"]]}}}
    _, first = journal.split(state)
    fan["done"]["0"] = "a"
    _, second = journal.split(state)
    assert [(e.key, json.loads(e.value)) for e in (*first, *second)] == [
        ("fan[1]", "b"), ("fan[0]", "a")]
    stored = [JournalEntry(e.scope, e.key, json.loads(e.value)) for e in (*first, *second)]
    live, _ = journal.split(state)
    assert whole_state(json.loads(live), stored)["journal"]["ops"]["fan"] == {
        "branches": 3, "done": {"1": "b", "0": "a"}}


def _fan_app() -> App:
    """``fan`` maps over ``branches`` items, branch ``i`` waiting ``i + 1`` hours, then
    waits an hour more (so the finished map is replayed from the journal) and returns."""
    app = App()

    @app.flow("fan")
    async def fan(ctx: Context, branches: int) -> list[str]:
        results = await ctx.map(_napping, range(branches), name="fan")
        await ctx.wait("after", "1h")
        return results

    return app


async def _napping(ctx: Context, index: int) -> str:
    await ctx.wait("nap", timedelta(hours=index + 1))
    return f"woke-{index}-" + "x" * 100


async def test_a_map_journals_each_finished_branch_once(tmp_path: Path, store_url: str) -> None:
    h = Harness(tmp_path, start=START, store_url=store_url, app=_fan_app())
    try:
        few, many = (h.start("fan", {"branches": n}) for n in (3, 30))
        await h.run_due()
        await h.advance(timedelta(hours=2))  # two branches of each finished
        assert "woke-" not in json.dumps(h.record(many).state)
        assert abs(_state_bytes(h, many) - _state_bytes(h, few)) < 27 * 200  # waits, not results
        await h.advance(timedelta(hours=31))
        record = h.record(many)
        assert (record.status, record.result) == (
            RunStatus.SUCCEEDED, [f"woke-{i}-" + "x" * 100 for i in range(30)])
        branches = [e.key for e in h.engine.store.journals([many])[many] if e.scope == BRANCHES]
        assert sorted(branches) == sorted(f"fan[{i}]" for i in range(30))
    finally:
        h.close()


def each_flow(items: int, concurrency: int = 1) -> str:
    """A for_each over ``items`` items whose every iteration waits an hour."""
    listed = ", ".join(f'"item-{i}"' for i in range(items))
    return (f"flow: each{items}\nsteps:\n  - all:\n      for_each: [{listed}]\n"
            f"      concurrency: {concurrency}\n      steps:\n"
            "        - nap: { wait: { for: 1h } }\n"
            "        - got: { set: { name: \"{{ item }}\", index: \"{{ loop.index }}\" } }\n")


async def test_a_for_each_journals_its_items_once_and_each_iteration_once(
        harness: Harness) -> None:
    few, many = (harness.start(harness.flow(each_flow(n))) for n in (3, 30))
    await harness.run_due()
    await harness.advance(timedelta(hours=2))  # two iterations of each finished
    assert _state_bytes(harness, many) <= _state_bytes(harness, few) + 2  # "n": 3 / 30
    assert "item-29" not in json.dumps(harness.record(many).state)
    await harness.advance(timedelta(hours=40))
    document = harness.document(many)
    assert document["status"] == "succeeded"
    assert [b["got"] for b in document["bindings"]["all"]] == [
        {"name": f"item-{i}", "index": i} for i in range(30)]
    scopes = [(e.scope, e.key) for e in harness.engine.store.journals([many])[many]]
    assert scopes[0] == (ITEMS, "all")
    # each iteration once, but the last: it finished in the walk that ended the for_each
    assert sorted(scopes[1:-1]) == sorted((DONE + "all", str(i)) for i in range(29))
    assert scopes[-1] == (BINDINGS, "all")


def poll_flow(iterations: int) -> str:
    """A repeat that polls every minute until its ``iterations``-th iteration."""
    last, pad = iterations - 1, "p" * 100
    return (f"flow: poll{iterations}\nsteps:\n  - poll:\n"
            f"      repeat: {{ every: 1m, max: 100, until: \"{{{{ loop.index == {last} }}}}\" }}\n"
            "      steps:\n"
            f"        - probe: {{ set: {{ n: \"{{{{ loop.index }}}}\", pad: \"{pad}\" }} }}\n")


async def test_a_repeat_journals_each_finished_iteration_once(harness: Harness) -> None:
    few, many = (harness.start(harness.flow(poll_flow(n))) for n in (10, 30))
    await harness.run_due()
    await harness.advance(timedelta(minutes=2))  # three iterations of each finished
    assert "ppp" not in json.dumps(harness.record(many).state)
    assert _state_bytes(harness, many) == _state_bytes(harness, few)
    await harness.advance(timedelta(minutes=30))
    document = harness.document(many)
    assert document["status"] == "succeeded"
    assert [b["probe"]["n"] for b in document["bindings"]["poll"]] == list(range(30))
    scopes = [(e.scope, e.key) for e in harness.engine.store.journals([many])[many]]
    # each iteration once, but the last: it finished in the walk that ended the repeat
    assert scopes[:-1] == [(DONE + "poll", str(i)) for i in range(29)]
    assert scopes[-1] == (BINDINGS, "poll")


async def test_a_resumed_for_each_reads_its_items_and_its_finished_iterations_at_the_end(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = harness.start(harness.flow(each_flow(4, concurrency=2)))
    await harness.run_due()
    reads: list[tuple[str, ...]] = []
    original = harness.engine.store.read_journal

    def counted(run: str, **query: Any) -> list[JournalEntry]:
        reads.append(tuple(query["scopes"]))
        return original(run, **query)

    monkeypatch.setattr(harness.engine.store, "read_journal", counted)
    await harness.advance(timedelta(hours=1))  # iterations 0 and 1 finish; 2 and 3 start
    assert reads == [(ITEMS,)]  # no binding before the for_each: none read
    await harness.advance(timedelta(hours=1))  # the last two finish: the for_each ends
    assert reads[1:] == [(ITEMS,), (DONE + "all",)]
    assert [b["got"]["index"] for b in harness.document(run_id)["bindings"]["all"]] == [
        0, 1, 2, 3]


def test_the_whole_state_puts_a_for_each_s_journal_back() -> None:
    live = {"root": {"at": 0, "phase": "steps", "b": {}, "cur": {
        "each": "all", "n": 2, "next": 2, "live": {"1": {"at": 0, "phase": "steps", "b": {}}},
        "done": {}, "failures": 0}}}
    stored = [JournalEntry(ITEMS, "all", ["a", "b"]), JournalEntry(DONE + "all", "0", {"x": 1})]
    cur = whole_state(live, stored)["root"]["cur"]
    assert (cur["items"], cur["done"]) == (["a", "b"], {"0": {"x": 1}})
