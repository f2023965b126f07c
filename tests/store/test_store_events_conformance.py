"""The event side of the store contract, run against every backend."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime

import pytest
from store_samples import T0, at, eventually, new_run

from tarry.errors import EventError, StoreError
from tarry.model import (
    CheckpointOutcome,
    EventState,
    EventWait,
    NewEvent,
    RunStatus,
    RunUpdate,
    Successor,
    TriggerStarts,
)
from tarry.store.base import Store

KEY = '["1700.1"]'


def _event(event_id: str, *, key: str = KEY, received: float = 1,
           buffer_until: datetime | None = None, errors: tuple[str, ...] = (),
           data: dict[str, object] | None = None) -> NewEvent:
    return NewEvent(id=event_id, type="slack.approval",
                    data=data if data is not None else {"approved": True},
                    received_at=at(received), match_key=None if errors else key,
                    errors=errors, buffer_until=buffer_until)


def _waiting(store: Store, run_id: str, *, key: str = KEY) -> None:
    """Create ``run_id`` and suspend it on a wait for the test's correlation."""
    store.create_run(new_run(run_id), [])
    store.claim_run(run_id, T0, "w1", at(30))
    wait = EventWait(wait_id="approval", type="slack.approval", match_key=key, until=at(3600))
    outcome = store.checkpoint("w1", T0, [RunUpdate(
        run_id=run_id, status=RunStatus.WAITING, state={}, history=[], due_at=at(3600),
        waits=(wait,))])
    assert outcome == {run_id: CheckpointOutcome.SAVED}


def test_an_event_goes_to_the_inbox_of_the_waiting_run_and_wakes_it(store: Store) -> None:
    _waiting(store, "r1")

    record = store.record_event(_event("e1"), at(5))

    assert (record.state, record.runs) == (EventState.DELIVERED, ("r1",))
    assert store.get_run("r1").due_at == at(5)
    [delivered] = store.inbox(["r1", "r2"])["r1"]
    assert (delivered.event_id, delivered.wait_id, delivered.type, delivered.data,
            delivered.received_at) == ("e1", "approval", "slack.approval",
                                       {"approved": True}, at(1))


def test_a_delivered_wait_stays_registered_so_the_next_event_reaches_the_run_too(
        store: Store) -> None:
    _waiting(store, "r1")
    store.record_event(_event("e1"), at(5))
    second = store.record_event(_event("e2"), at(6))
    assert (second.state, second.runs) == (EventState.DELIVERED, ("r1",))
    assert [e.event_id for e in store.inbox(["r1"])["r1"]] == ["e1", "e2"]


def test_an_event_received_at_or_after_a_wait_deadline_does_not_reach_it(store: Store) -> None:
    _waiting(store, "r1")
    late = _event("late", received=3600)
    assert (store.record_event(late, at(3700)).state, store.inbox(["r1"])) == (
        EventState.UNMATCHED, {})


def test_an_event_reaches_every_run_waiting_on_its_correlation_only(store: Store) -> None:
    _waiting(store, "a")
    _waiting(store, "b")
    _waiting(store, "other", key='["9"]')

    record = store.record_event(_event("e1"), at(5))

    assert record.runs == ("a", "b")
    assert sorted(store.inbox(["a", "b", "other"])) == ["a", "b"]


def test_an_early_event_is_buffered_and_taken_by_the_wait_that_comes_later(
        store: Store) -> None:
    early = store.record_event(_event("e1", buffer_until=at(300)), at(1))
    assert early.state is EventState.BUFFERED

    _waiting(store, "r1")

    assert store.get_event("e1").state is EventState.DELIVERED
    assert [item.event_id for item in store.inbox(["r1"])["r1"]] == ["e1"]
    assert store.get_run("r1").due_at == T0


def test_an_event_without_buffer_and_without_run_is_unmatched(store: Store) -> None:
    assert store.record_event(_event("e1"), at(1)).state is EventState.UNMATCHED


def test_a_lapsed_buffer_is_listed_as_unmatched(store: Store) -> None:
    store.record_event(_event("e1", buffer_until=at(60)), at(1))
    assert [e.state for e in store.list_events(now=at(59))] == [EventState.BUFFERED]
    assert [e.state for e in store.list_events(now=at(60))] == [EventState.UNMATCHED]


def test_an_invalid_event_is_quarantined_with_its_errors(store: Store) -> None:
    _waiting(store, "r1")

    record = store.record_event(_event("e1", errors=("'approved' is required",)), at(5))

    assert (record.state, record.errors, record.runs) == (
        EventState.INVALID, ("'approved' is required",), ())
    assert store.inbox(["r1"]) == {}


def test_a_known_event_id_is_a_duplicate_and_changes_nothing(store: Store) -> None:
    store.record_event(_event("e1", data={"n": 1}), at(1))

    again = store.record_event(_event("e1", data={"n": 2}), at(2))

    assert (again.state, again.data) == (EventState.DUPLICATE, {"n": 1})
    assert store.get_event("e1").state is EventState.UNMATCHED


def test_a_checkpoint_consumes_inbox_entries(store: Store) -> None:
    _waiting(store, "r1")
    store.record_event(_event("e1"), at(5))
    [item] = store.inbox(["r1"])["r1"]
    store.claim_run("r1", at(5), "w1", at(35))

    store.checkpoint("w1", at(6), [RunUpdate(run_id="r1", status=RunStatus.SUCCEEDED,
                                             state={}, history=[], consumed=(item.inbox_id,))])

    assert store.inbox(["r1"]) == {}


def test_list_events_is_newest_first_and_filters_by_state(store: Store) -> None:
    store.record_event(_event("old", received=1), at(1))
    store.record_event(_event("bad", received=2, errors=("no",)), at(2))
    store.record_event(_event("new", received=3), at(3))

    assert [e.id for e in store.list_events(now=at(9))] == ["new", "bad", "old"]
    assert [e.id for e in store.list_events(state=EventState.INVALID, now=at(9))] == ["bad"]


def test_a_quarantined_event_can_be_redelivered_corrected(store: Store) -> None:
    _waiting(store, "r1")
    store.record_event(_event("e1", errors=("no",), data={}), at(5))

    record = store.redeliver(_event("e1"), at(6))

    assert (record.state, record.runs, record.data) == (
        EventState.DELIVERED, ("r1",), {"approved": True})


def test_a_delivered_event_cannot_be_redelivered_or_discarded(store: Store) -> None:
    _waiting(store, "r1")
    store.record_event(_event("e1"), at(5))
    message = "^event 'e1' is delivered; only invalid, unmatched or buffered events can be {}$"
    with pytest.raises(EventError, match=message.format("redelivered")):
        store.redeliver(_event("e1"), at(6))
    with pytest.raises(EventError, match=message.format("discarded")):
        store.discard("e1", at(6))


def test_discard_marks_an_unmatched_event_discarded(store: Store) -> None:
    store.record_event(_event("e1"), at(1))
    assert store.discard("e1", at(2)).state is EventState.DISCARDED


def test_get_event_of_an_unknown_id_raises(store: Store) -> None:
    with pytest.raises(EventError, match=r"^no event with id 'nope'$"):
        store.get_event("nope")


def test_a_delivery_from_another_store_moves_the_change_token(
        store: Store, store_factory: Callable[[], Store]) -> None:
    _waiting(store, "r1")
    before = store.change_token()

    store_factory().record_event(_event("e1"), at(5))

    assert eventually(lambda: store.change_token() != before)


def test_a_cancelled_run_no_longer_waits_for_events(store: Store) -> None:
    _waiting(store, "r1")
    store.cancel("r1", "alice", at(2))

    record = store.record_event(_event("e1"), at(5))

    assert (record.state, record.runs) == (EventState.UNMATCHED, ())
    assert store.inbox(["r1"]) == {}


@pytest.mark.parametrize("event", [
    _event("e-delivered"),
    _event("e-buffered", key='["nobody"]', buffer_until=at(600), data={"n": [1, 2.5, None]}),
    _event("e-invalid", errors=("missing 'ticket'",), data={"text": "ünïcode"}),
], ids=lambda event: event.id)
def test_the_record_of_a_new_event_is_what_a_read_returns(store: Store, event: NewEvent) -> None:
    _waiting(store, "r1")
    recorded = store.record_event(event, at(5))
    assert recorded == store.get_event(event.id)  # built from the insert, not read back


def test_record_events_delivers_each_in_order_in_one_transaction(store: Store) -> None:
    _waiting(store, "r1")
    store.record_event(_event("old"), at(2))
    records = store.record_events([(_event("e1"), None), (_event("e1"), None),
                                   (_event("old"), None), (_event("e2", key='["other"]'), None),
                                   (_event("bad", errors=("no",)), None)], at(5))
    assert [(r.id, r.state, r.runs) for r in records] == [
        ("e1", EventState.DELIVERED, ("r1",)), ("e1", EventState.DUPLICATE, ("r1",)),
        ("old", EventState.DUPLICATE, ("r1",)), ("e2", EventState.UNMATCHED, ()),
        ("bad", EventState.INVALID, ())]
    assert [e.event_id for e in store.inbox(["r1"])["r1"]] == ["old", "e1"]


def test_record_events_that_fail_part_way_write_none_of_them(store: Store) -> None:
    _waiting(store, "r1")
    due_before = store.get_run("r1").due_at
    clash = TriggerStarts(runs=((new_run("started"), ()),), supersede_since=T0)
    with pytest.raises(StoreError):  # the second event's start has the first one's run id
        store.record_events([(_event("e1"), clash),
                             (_event("e2", key='["other"]'), clash)], at(5))
    assert store.list_events(now=at(5)) == []
    assert [r.id for r in store.list_runs()] == ["r1"]
    assert store.inbox(["r1"]) == {}
    assert store.get_run("r1").due_at == due_before


Batch = list[tuple[NewEvent, TriggerStarts | None]]


def _refused_in_opposite_orders(store_factory: Callable[[], Store], batches: int,
                                batch: Callable[[str, str], Batch],
                                names: tuple[str, str]) -> list[StoreError]:
    """Two senders on stores of their own, started together, each recording ``batches``
    batches of ``batch(tag, name)`` for the two ``names``, one sender in their order and
    the other in the opposite one; every error a record raised."""
    refused: list[StoreError] = []
    barrier = threading.Barrier(2)

    def send(sender: Store, order: tuple[str, str], tag: int) -> None:
        barrier.wait()
        for number in range(batches):  # each batch holds one, then wants the other
            try:
                sender.record_events([event for name in order
                                      for event in batch(f"{tag}-{number}", name)], at(5))
            except StoreError as error:
                refused.append(error)

    threads = [threading.Thread(target=send, args=(store_factory(), order, tag))
               for tag, order in enumerate((names, names[::-1]))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return refused


def test_batches_of_the_same_correlations_in_opposite_orders_do_not_deadlock(
        store: Store, store_factory: Callable[[], Store]) -> None:
    first, second = '["a"]', '["b"]'
    _waiting(store, "ra", key=first)
    _waiting(store, "rb", key=second)

    def wake(tag: str, key: str) -> Batch:  # the event wakes the run waiting on ``key``
        return [(_event(f"{tag}-{key}", key=key), None)]

    assert _refused_in_opposite_orders(store_factory, 200, wake, (first, second)) == []
    inbox = store.inbox(["ra", "rb"])
    assert (len(inbox["ra"]), len(inbox["rb"])) == (400, 400)


def test_batches_starting_held_runs_on_the_same_targets_in_opposite_orders_do_not_deadlock(
        store: Store, store_factory: Callable[[], Store]) -> None:
    def hold(tag: str, target: str) -> Batch:  # the event starts a run held on ``target``
        run = new_run(f"run-{tag}-{target}", status=RunStatus.HELD, target=target,
                      due_at=at(3600))
        return [(_event(f"{tag}-{target}", key=f'["{tag}-{target}"]'),
                 TriggerStarts(runs=((run, ()),), supersede_since=T0))]

    assert _refused_in_opposite_orders(store_factory, 100, hold,
                                       ("deploy-a", "deploy-b")) == []
    assert store.count_runs() == 400  # the first of each target held, the others superseded
    assert store.count_runs(status=RunStatus.HELD) == 2


def _continuing(run_id: str, successor: str, *, consumed: tuple[str, ...] = ()) -> RunUpdate:
    """An update that ends ``run_id`` by continuing as ``successor`` (created with it)."""
    return RunUpdate(run_id=run_id, status=RunStatus.SUCCEEDED, state={}, history=[],
                     exit="continued", consumed=consumed, successor=Successor(
                         new_run(successor, continued_from=run_id, created_at=at(6),
                                 due_at=at(6)), (), rebuffer_until=at(7200)))


def test_a_run_that_continues_as_new_creates_its_successor_and_hands_it_its_inbox(
        store: Store) -> None:
    _waiting(store, "r1")
    store.record_event(_event("e1"), at(5))
    store.record_event(_event("e2", received=2), at(5))
    [taken, left] = store.inbox(["r1"])["r1"]
    store.claim_run("r1", at(5), "w1", at(35))

    store.checkpoint("w1", at(6), [_continuing("r1", "r2", consumed=(taken.inbox_id,))])

    successor = store.get_run("r2")
    assert (successor.status, successor.continued_from, successor.due_at) == (
        RunStatus.PENDING, "r1", at(6))
    assert (store.continued_as("r1"), store.continued_as("r2")) == ("r2", None)
    assert store.inbox(["r1"]) == {}
    rebuffered = store.get_event(left.event_id)
    assert (rebuffered.state, rebuffered.buffer_until) == (EventState.BUFFERED, at(7200))
    assert store.get_event(taken.event_id).state is EventState.DELIVERED

    store.claim_run("r2", at(7), "w1", at(37))  # its wait takes the event from the buffer
    wait = EventWait(wait_id="again", type="slack.approval", match_key=KEY, until=at(9000))
    store.checkpoint("w1", at(8), [RunUpdate(run_id="r2", status=RunStatus.WAITING, state={},
                                             history=[], due_at=at(9000), waits=(wait,))])
    [handed] = store.inbox(["r2"])["r2"]
    assert (handed.event_id, handed.wait_id) == ("e2", "again")


def test_a_successor_that_cannot_be_created_leaves_the_run_as_it_was(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    store.create_run(new_run("taken"), [])
    assert store.claim_run("r1", at(5), "w1", at(35)) is not None

    with pytest.raises(StoreError):
        store.checkpoint("w1", at(6), [_continuing("r1", "taken")])

    record = store.get_run("r1")
    assert (record.status, record.lease_owner, store.continued_as("r1")) == (
        RunStatus.RUNNING, "w1", None)
