"""Starting runs: one transaction per start, batches with start_many, concurrent starts
committed together, parsed flows cached."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tarry.engine import catalog
from tarry.engine.runtime import StartRequest
from tarry.errors import FlowNotFound, InvalidRunRequest, LoadError, StoreError
from tarry.files import FileSignature
from tarry.model import RunRecord, RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

GREET = """\
flow: greet
inputs:
  name: { type: string, required: true }
steps:
  - hello:
      set: { greeting: "hello {{ name }}" }
"""


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "greet.yaml").write_text(GREET, encoding="utf-8")
    h = Harness(tmp_path, start=START, store_url=store_url)
    yield h
    h.close()


def test_start_returns_the_run_as_stored(harness: Harness) -> None:
    record = harness.engine.start("greet", {"name": "ada"}, target="t-1")
    assert record == harness.record(record.id)
    assert (record.status, record.inputs, record.target) == (RunStatus.PENDING,
                                                              {"name": "ada"}, "t-1")


async def test_start_many_creates_every_run_in_order(harness: Harness) -> None:
    records = harness.engine.start_many("greet", [{"name": "ada"}, {"name": "bob"}],
                                        targets=["a", None])
    assert [harness.record(r.id) for r in records] == records
    assert [(r.inputs["name"], r.target) for r in records] == [("ada", "a"), ("bob", None)]
    await harness.run_until_idle()
    assert [harness.document(r.id)["bindings"]["hello"] for r in records] == [
        {"greeting": "hello ada"}, {"greeting": "hello bob"}]
    assert harness.history_kinds(records[0].id)[0] == "created"


def test_start_many_with_one_bad_input_creates_nothing(harness: Harness) -> None:
    with pytest.raises(InvalidRunRequest) as caught:
        harness.engine.start_many("greet", [{"name": "ada"}, {"name": 3}])
    assert str(caught.value) == "input 'name' must be a string, got 3"
    assert harness.engine.store.list_runs() == []


def test_start_many_refuses_targets_that_do_not_pair_with_the_inputs(
        harness: Harness) -> None:
    with pytest.raises(InvalidRunRequest) as caught:
        harness.engine.start_many("greet", [{"name": "ada"}], targets=["a", "b"])
    assert str(caught.value) == "start_many got 1 inputs but 2 targets"
    assert harness.engine.store.list_runs() == []


def test_start_many_of_a_held_flow_admits_each_run(harness: Harness) -> None:
    held = harness.flow("""
flow: gated
hold:
  - after: "2026-03-02T09:00:00Z"
steps:
  - go: { log: { message: go } }
""")
    first, second, other = harness.engine.start_many(held, [{}, {}, {}],
                                                     targets=["x", "x", "y"])
    assert (first.status, second.status, other.status) == (
        RunStatus.HELD, RunStatus.REFUSED, RunStatus.HELD)
    assert second.reason == "hold-superseded"
    assert harness.record(second.id) == second


def _edit(path: Path, text: str) -> None:
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def test_a_changed_flow_file_is_read_again_on_the_next_start(harness: Harness) -> None:
    path = harness.directory / "flows" / "greet.yaml"
    first = harness.engine.start("greet", {"name": "ada"})
    _edit(path, GREET.replace("hello {{ name }}", "hi {{ name }}"))
    second = harness.engine.start("greet", {"name": "ada"})
    assert first.flow_digest != second.flow_digest
    assert harness.engine.store.flow_source(second.flow_digest) == path.read_text()


def test_a_flow_file_added_later_is_found(harness: Harness) -> None:
    harness.engine.start("greet", {"name": "ada"})
    (harness.directory / "flows" / "later.yaml").write_text(
        "flow: later\nsteps:\n  - hello: { log: { message: hi } }\n", encoding="utf-8")
    assert harness.engine.start("later").flow == "later"


def test_a_renamed_flow_file_is_found_by_the_name_of_its_flow(harness: Harness) -> None:
    flows = harness.directory / "flows"
    first = harness.engine.start("greet", {"name": "ada"})
    (flows / "greet.yaml").rename(flows / "welcome.yaml")
    assert harness.engine.start("greet", {"name": "ada"}).flow_digest == first.flow_digest
    with pytest.raises(FlowNotFound):
        harness.engine.start("welcome", {"name": "ada"})


@pytest.mark.parametrize("old_name_first", [True, False])
def test_a_flow_renamed_inside_its_file_is_found_by_its_new_name_only(
        harness: Harness, old_name_first: bool) -> None:
    flows = harness.directory / "flows"
    harness.engine.start("greet", {"name": "ada"})
    _edit(flows / "greet.yaml", GREET.replace("flow: greet", "flow: welcome"))
    if not old_name_first:
        assert harness.engine.start("welcome", {"name": "ada"}).flow == "welcome"
    with pytest.raises(FlowNotFound) as caught:
        harness.engine.start("greet", {"name": "ada"})
    assert str(caught.value) == f"no flow named 'greet' in {flows}"
    assert harness.engine.start("welcome", {"name": "ada"}).flow == "welcome"


def test_a_deleted_flow_file_is_no_longer_found(harness: Harness) -> None:
    harness.engine.start("greet", {"name": "ada"})
    (harness.directory / "flows" / "greet.yaml").unlink()
    with pytest.raises(FlowNotFound):
        harness.engine.start("greet", {"name": "ada"})


def _watching_files(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The paths the catalog looks at (``file_signature``) from now on."""
    looked: list[Path] = []
    signature = catalog.file_signature

    def watched(path: str | os.PathLike[str]) -> FileSignature | None:
        looked.append(Path(path))
        return signature(path)

    monkeypatch.setattr(catalog, "file_signature", watched)
    return looked


def _other_flows(flows: Path, count: int) -> None:
    for number in range(count):
        (flows / f"other{number}.yaml").write_text(
            f"flow: other{number}\nsteps:\n  - hello: {{ log: {{ message: hi }} }}\n",
            encoding="utf-8")


@pytest.mark.parametrize("first", [True, False])
def test_a_start_looks_at_the_folder_and_the_file_named_after_the_flow_only(
        harness: Harness, monkeypatch: pytest.MonkeyPatch, first: bool) -> None:
    flows = harness.directory / "flows"
    _other_flows(flows, 3)
    if not first:
        harness.engine.start("greet", {"name": "ada"})
    looked = _watching_files(monkeypatch)
    harness.engine.start("greet", {"name": "bob"})
    assert looked == [flows, flows / "greet.yaml"]


def test_a_flow_in_a_file_named_otherwise_is_found_and_then_looked_at_alone(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    flows = harness.directory / "flows"
    _other_flows(flows, 3)
    (flows / "welcome.yaml").write_text(GREET.replace("flow: greet", "flow: hello"),
                                        encoding="utf-8")
    assert harness.engine.start("hello", {"name": "ada"}).flow == "hello"
    looked = _watching_files(monkeypatch)
    harness.engine.start("hello", {"name": "bob"})
    assert looked == [flows, flows / "welcome.yaml"]


@pytest.mark.parametrize("started_before", [True, False])
def test_of_two_files_holding_one_flow_the_one_named_after_it_wins_else_the_last(
        harness: Harness, started_before: bool) -> None:
    flows = harness.directory / "flows"
    if started_before:
        harness.engine.start("greet", {"name": "ada"})
    (flows / "greet.yaml").rename(flows / "a-greet.yaml")
    (flows / "z-greet.yaml").write_text(GREET.replace("hello {{ name }}", "hi {{ name }}"),
                                        encoding="utf-8")
    last = harness.engine.start("greet", {"name": "ada"})
    assert harness.engine.store.flow_source(last.flow_digest) == (
        flows / "z-greet.yaml").read_text(encoding="utf-8")
    (flows / "a-greet.yaml").rename(flows / "greet.yaml")
    named_after = harness.engine.start("greet", {"name": "ada"})
    assert harness.engine.store.flow_source(named_after.flow_digest) == GREET


def test_a_broken_flow_file_stays_refused_until_it_is_fixed(harness: Harness) -> None:
    path = harness.directory / "flows" / "greet.yaml"
    _edit(path, GREET.replace("set:", "sett:"))
    for _ in range(2):
        with pytest.raises(LoadError) as caught:
            harness.engine.catalog.resolve(str(path))
        assert str(caught.value) == (f"{path}:6:7: unknown action or key 'sett' "
                                     "(did you mean 'set'?)")
    _edit(path, GREET)
    assert harness.engine.start("greet", {"name": "ada"}).flow == "greet"


def _counting_inserts(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the store's ``create_runs`` calls from now on (the real store does the
    work; this only watches it)."""
    sizes: list[int] = []
    insert = harness.engine.store.create_runs

    def watched(runs: Sequence[Any]) -> None:
        sizes.append(len(runs))
        insert(runs)

    monkeypatch.setattr(harness.engine.store, "create_runs", watched)
    return sizes


async def test_concurrent_async_starts_share_one_transaction(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    inserts = _counting_inserts(harness, monkeypatch)
    records = await asyncio.gather(*(harness.engine.aio.start("greet", {"name": f"n{i}"})
                                     for i in range(20)))
    assert inserts == [20]
    assert [harness.record(r.id).inputs["name"] for r in records] == [f"n{i}" for i in range(20)]


async def test_a_refused_start_among_concurrent_ones_fails_only_its_caller(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    inserts = _counting_inserts(harness, monkeypatch)
    good, bad_input, unknown, other = await asyncio.gather(
        harness.engine.aio.start("greet", {"name": "ada"}),
        harness.engine.aio.start("greet", {"name": 3}),
        harness.engine.aio.start("nope", {}),
        harness.engine.aio.start("greet", {"name": "bob"}), return_exceptions=True)
    assert isinstance(bad_input, InvalidRunRequest)
    assert str(bad_input) == "input 'name' must be a string, got 3"
    assert isinstance(unknown, FlowNotFound)
    assert isinstance(good, RunRecord)
    assert isinstance(other, RunRecord)
    assert inserts == [2]
    assert {r.id for r in harness.engine.store.list_runs()} == {good.id, other.id}


def test_a_start_the_store_refuses_in_a_batch_fails_alone(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    inserts = _counting_inserts(harness, monkeypatch)
    first, again, other = harness.engine.start_each([
        StartRequest("greet", {"name": "ada"}, run_id="r-1"),
        StartRequest("greet", {"name": "ada"}, run_id="r-1"),
        StartRequest("greet", {"name": "bob"})])
    assert isinstance(again, StoreError)
    assert isinstance(first, RunRecord)
    assert isinstance(other, RunRecord)
    assert inserts == [3, 1, 1, 1]  # together, then each alone once the batch was refused
    assert {r.id for r in harness.engine.store.list_runs()} == {"r-1", other.id}
