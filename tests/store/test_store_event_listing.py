"""Listing events in keyset pages, filtered by state and type, on every backend."""

from __future__ import annotations

from store_samples import at

from tarry.model import EventState, NewEvent
from tarry.store.base import Store


def _send(store: Store, event_id: str, type: str, received: float, *,
          invalid: bool = False) -> None:
    store.record_event(NewEvent(id=event_id, type=type, data={}, received_at=at(received),
                                match_key=None if invalid else '["k"]',
                                errors=("bad",) if invalid else ()), at(received))


def _page(store: Store, **filters: object) -> list[str]:
    return [event.id for event in store.list_events(now=at(99), **filters)]  # type: ignore[arg-type]


def test_pages_follow_each_other_without_gaps_or_repeats_when_instants_tie(store: Store) -> None:
    for number, received in enumerate([1, 2, 2, 2, 3]):
        _send(store, f"e{number}", "a.type" if number % 2 else "b.type", received)
    seen: list[str] = []
    after = None
    while page := store.list_events(now=at(99), after=after, limit=2):
        seen += [event.id for event in page]
        last = page[-1]
        after = (last.received_at, last.type, last.id)
    assert seen == ["e4", "e2", "e3", "e1", "e0"]


def test_events_are_filtered_by_type_and_by_state(store: Store) -> None:
    _send(store, "a1", "a.type", 1)
    _send(store, "b1", "b.type", 2)
    _send(store, "a2", "a.type", 3, invalid=True)
    assert _page(store, type="a.type") == ["a2", "a1"]
    assert _page(store, type="a.type", state=EventState.UNMATCHED) == ["a1"]
    assert _page(store, state=EventState.INVALID) == ["a2"]


def test_events_in_every_state_are_merged_newest_first_page_by_page(store: Store) -> None:
    # No index orders every event: each state is read on its own and the pages merged.
    for number, (type, received) in enumerate([("b.type", 1), ("a.type", 2), ("b.type", 2),
                                               ("a.type", 2), ("c.type", 3), ("a.type", 4)]):
        _send(store, f"e{number}", type, received, invalid=number % 2 == 0)
    pages: list[list[str]] = []
    after = None
    while page := store.list_events(now=at(99), after=after, limit=2):
        pages.append([event.id for event in page])
        last = page[-1]
        after = (last.received_at, last.type, last.id)
    assert pages == [["e5", "e4"], ["e2", "e3"], ["e1", "e0"]]
    assert _page(store, type="a.type") == ["e5", "e3", "e1"]
