"""Counting the events an operator may act on, run against every backend."""

from __future__ import annotations

from store_samples import at

from tarry.model import EventState, NewEvent
from tarry.store.base import Store


def _event(event_id: str, *, errors: tuple[str, ...] = (), buffered: bool = False) -> NewEvent:
    return NewEvent(id=event_id, type="slack.approval", data={"approved": True},
                    received_at=at(1), match_key=None if errors else '["k"]', errors=errors,
                    buffer_until=at(600) if buffered else None)


def test_the_inbox_counts_quarantined_buffered_and_unmatched_events(store: Store) -> None:
    store.record_event(_event("bad1", errors=("approved: missing",)), at(1))
    store.record_event(_event("bad2", errors=("approved: missing",)), at(1))
    store.record_event(_event("early", buffered=True), at(1))
    store.record_event(_event("lost"), at(1))
    store.discard("bad2", at(2))

    assert store.count_inbox_events() == {EventState.INVALID: 1, EventState.BUFFERED: 1,
                                          EventState.UNMATCHED: 1}


def test_an_empty_inbox_counts_nothing(store: Store) -> None:
    assert store.count_inbox_events() == {}
