"""Rerun, cancel with a reason, and batches over the runs a filter selects (SPEC 4.1), through
the real engine on a virtual clock, on both stores."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tarry.engine.documents import batch_document
from tarry.errors import BatchNotFound, InvalidRunRequest, InvalidValue, RunStateError
from tarry.model import BatchAction, BatchFilter, RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

NAP = """
flow: nap
inputs:
  who: { type: string, required: true }
steps:
  - nap: { wait: { for: 1d } }
"""

BROKEN = """
flow: broken
inputs:
  fine: { type: boolean, default: false }
steps:
  - check:
      if: "{{ not fine }}"
      fail: "not fine"
"""


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    h = Harness(tmp_path, start=START, store_url=store_url)
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "nap.yaml").write_text(NAP)
    (tmp_path / "flows" / "broken.yaml").write_text(BROKEN)
    yield h
    h.close()


async def test_a_rerun_is_a_new_run_with_the_same_inputs_and_target_linked_both_ways(
        harness: Harness) -> None:
    first = harness.engine.start("nap", {"who": "ada"}, target="acme/web#7").id
    await harness.advance(timedelta(hours=1))

    rerun = harness.engine.rerun(first)

    assert rerun.id != first
    assert (rerun.flow, rerun.inputs, rerun.target, rerun.status) == (
        "nap", {"who": "ada"}, "acme/web#7", RunStatus.PENDING)
    document = harness.document(rerun.id)
    assert (document["rerun_of"], document["reruns"]) == (first, [])
    assert document["history"][0] == {"at": "2026-03-01T10:00:00.000Z", "kind": "created",
                                      "step": None,
                                      "data": {"target": "acme/web#7", "rerun_of": first}}
    assert harness.document(first)["reruns"] == [rerun.id]


async def test_a_rerun_takes_input_overrides_and_the_flows_current_definition(
        harness: Harness) -> None:
    first = harness.engine.start("nap", {"who": "ada"}).id
    (harness.directory / "flows" / "nap.yaml").write_text(NAP.replace("1d", "2d"))

    rerun = harness.engine.rerun(first, inputs={"who": "grace"})
    await harness.run_due()

    assert rerun.inputs == {"who": "grace"}
    assert harness.record(rerun.id).due_at == START + timedelta(days=2)
    assert harness.record(first).flow_digest != rerun.flow_digest


async def test_a_rerun_with_inputs_the_flow_refuses_starts_nothing(harness: Harness) -> None:
    first = harness.engine.start("nap", {"who": "ada"}).id
    with pytest.raises(InvalidRunRequest, match="who"):
        harness.engine.rerun(first, inputs={"who": 3})
    assert harness.document(first)["reruns"] == []


async def test_cancel_records_who_and_why(harness: Harness) -> None:
    run_id = harness.engine.start("nap", {"who": "ada"}).id
    await harness.run_due()

    harness.engine.cancel(run_id, by="alice", reason="  customer withdrew  ")

    [entry] = [e for e in harness.engine.store.history(run_id) if e.kind == "cancelled"]
    assert entry.data == {"by": "alice", "reason": "customer withdrew"}


async def test_a_reason_over_the_limit_is_refused_and_nothing_is_cancelled(
        harness: Harness) -> None:
    run_id = harness.engine.start("nap", {"who": "ada"}).id
    with pytest.raises(InvalidRunRequest) as caught:
        harness.engine.cancel(run_id, by="alice", reason="é" * 513)
    assert str(caught.value) == "a reason is at most 1,024 bytes; this one has 1,026: shorten it"
    with pytest.raises(InvalidValue) as refused:
        harness.engine.cancel(run_id, by="alice", reason="a\x00b")
    assert str(refused.value) == ("the reason: a NUL character (\\u0000) is not allowed in "
                                  "text (no store keeps it)")
    assert harness.record(run_id).status is RunStatus.PENDING


def _work(harness: Harness, batch_id: str) -> list[tuple[int, int]]:
    """Work a batch to its end; its (acted, skipped) after each page."""
    progress = []
    while True:
        batch = harness.engine.work_batch(batch_id)
        progress.append((batch.acted, batch.skipped))
        if batch.done:
            return progress


async def test_a_bulk_cancel_acts_on_exactly_the_runs_its_filter_selects(
        harness: Harness) -> None:
    napping = [harness.engine.start("nap", {"who": f"n{i}"}, target="eu").id for i in range(450)]
    other = harness.engine.start("nap", {"who": "us"}, target="us").id
    failed = harness.engine.start("broken").id
    await harness.run_due()
    selected = BatchFilter(flow="nap", target="eu")
    assert harness.engine.count_batch(BatchAction.CANCEL, selected) == 450

    batch = harness.engine.batch(BatchAction.CANCEL, selected, by="alice", reason="drill")
    assert (batch.total, batch.acted, batch.done) == (450, 0, False)
    assert _work(harness, batch.id) == [(200, 0), (400, 0), (450, 0)]

    assert {harness.record(run).status for run in napping} == {RunStatus.CANCELLED}
    assert harness.record(other).status is RunStatus.WAITING
    assert harness.record(failed).status is RunStatus.FAILED
    [entry] = [e for e in harness.engine.store.history(napping[0]) if e.kind == "cancelled"]
    assert entry.data == {"by": "alice", "reason": "drill"}
    document = batch_document(harness.engine.store.get_batch(batch.id))
    assert {key: document[key] for key in ("action", "state", "total", "acted", "skipped")} == {
        "action": "cancel", "state": "done", "total": 450, "acted": 450, "skipped": 0}
    assert document["filter"]["target"] == "eu"


async def test_a_batch_worked_again_after_it_is_done_acts_on_nothing(harness: Harness) -> None:
    for i in range(3):
        harness.engine.start("nap", {"who": f"n{i}"})
    batch = harness.engine.batch(BatchAction.CANCEL, BatchFilter(), by="alice")
    _work(harness, batch.id)
    later = harness.engine.start("nap", {"who": "later"}).id

    again = harness.engine.work_batch(batch.id)

    assert (again.acted, again.skipped, again.done) == (3, 0, True)
    assert harness.record(later).status is RunStatus.PENDING


async def test_a_batch_selects_only_runs_created_before_it_and_before_older_than(
        harness: Harness) -> None:
    old = harness.engine.start("nap", {"who": "old"}).id
    await harness.advance(timedelta(hours=2))
    young = harness.engine.start("nap", {"who": "young"}).id
    selected = BatchFilter(created_before=harness.clock.now() - timedelta(hours=1))
    assert harness.engine.count_batch(BatchAction.CANCEL, selected) == 1

    batch = harness.engine.batch(BatchAction.CANCEL, selected, by="alice")
    _work(harness, batch.id)

    assert harness.record(old).status is RunStatus.CANCELLED
    assert harness.record(young).status is RunStatus.PENDING


async def test_a_bulk_retry_retries_the_failed_runs_it_selects(harness: Harness) -> None:
    broken = [harness.engine.start("broken").id for _ in range(3)]
    napping = harness.engine.start("nap", {"who": "ada"}).id
    await harness.run_due()
    batch = harness.engine.batch(BatchAction.RETRY, BatchFilter(), by="alice", reason="again")
    assert batch.total == 3
    assert _work(harness, batch.id) == [(3, 0)]
    assert {harness.record(run).status for run in broken} == {RunStatus.PENDING}
    assert harness.record(napping).status is RunStatus.WAITING
    [entry] = [e for e in harness.engine.store.history(broken[0]) if e.kind == "retried"]
    assert entry.data == {"by": "alice", "reason": "again"}


async def test_a_run_that_changed_since_the_count_is_skipped(harness: Harness) -> None:
    runs = [harness.engine.start("nap", {"who": f"n{i}"}).id for i in range(2)]
    batch = harness.engine.batch(BatchAction.CANCEL, BatchFilter(), by="alice")
    harness.engine.cancel(runs[0], by="bob")
    assert _work(harness, batch.id) == [(1, 0)]  # the cancelled one is no longer selected
    assert harness.engine.store.get_batch(batch.id).total == 2


async def test_a_filter_on_a_status_the_action_never_acts_on_is_refused(
        harness: Harness) -> None:
    with pytest.raises(InvalidRunRequest) as caught:
        harness.engine.batch(BatchAction.RETRY, BatchFilter(status=RunStatus.WAITING),
                             by="alice")
    assert str(caught.value) == ("a retry acts on runs that are failed; a filter on status "
                                 "waiting selects none of them")


async def test_an_unknown_batch_is_not_found(harness: Harness) -> None:
    with pytest.raises(BatchNotFound, match=r"^no batch with id 'nope'$"):
        harness.engine.store.get_batch("nope")


async def test_cancelling_an_ended_run_still_says_so(harness: Harness) -> None:
    run_id = harness.engine.start("broken").id
    await harness.run_due()
    with pytest.raises(RunStateError, match=f"^run {run_id} already failed$"):
        harness.engine.cancel(run_id, by="alice", reason="too late")


async def test_a_filter_text_over_the_limit_is_refused_and_no_batch_is_recorded(
        harness: Harness) -> None:
    with pytest.raises(InvalidRunRequest) as caught:
        harness.engine.batch(BatchAction.CANCEL, BatchFilter(flow="f" * 1025), by="alice")
    assert str(caught.value) == ("the filter's flow is at most 1,024 bytes; this one has "
                                 "1,025: shorten it")
    assert harness.engine.store.unfinished_batches() == []


async def test_a_batch_interrupted_between_pages_goes_on_without_acting_twice(
        harness: Harness, tmp_path: Path, store_url: str) -> None:
    runs = [harness.engine.start("nap", {"who": f"n{i}"}).id for i in range(250)]
    batch = harness.engine.batch(BatchAction.CANCEL, BatchFilter(), by="alice")
    first = harness.engine.work_batch(batch.id)  # then the process stops
    assert (first.acted, first.done) == (200, False)

    with Harness(tmp_path / "again", start=START, store_url=store_url) as again:
        assert again.engine.store.unfinished_batches() == [batch.id]
        _work(again, batch.id)

    done = harness.engine.store.get_batch(batch.id)
    assert (done.acted, done.skipped, done.done) == (250, 0, True)
    assert all([e.kind for e in harness.engine.store.history(run)].count("cancelled") == 1
               for run in runs)
    assert harness.engine.store.unfinished_batches() == []


async def test_over_thousands_of_runs_the_dry_run_count_is_what_the_batch_acts_on(
        harness: Harness) -> None:
    harness.engine.start_many("nap", [{"who": f"n{i}"} for i in range(2500)])
    harness.engine.start_many("broken", [{}] * 300)
    await harness.run_due()
    # the retried runs are pending again: the cancel takes them too
    for action, expected in ((BatchAction.RETRY, 300), (BatchAction.CANCEL, 2800)):
        counted = harness.engine.count_batch(action, BatchFilter())
        batch = harness.engine.batch(action, BatchFilter(), by="alice")
        progress = _work(harness, batch.id)
        assert counted == batch.total == progress[-1][0] == expected
        assert len(progress) == expected // 200 + 1
    assert harness.engine.store.count_runs(status=RunStatus.CANCELLED) == 2800
