"""The API bases of the error hierarchy: what a server maps to 404, 409, 400 and 503."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tarry.errors import (
    Conflict,
    EventError,
    EventNotFound,
    EventStateError,
    FlowNotFound,
    InvalidRequest,
    InvalidRunRequest,
    NotFound,
    RunError,
    RunNotFound,
    RunStateError,
    StoreError,
    StoreUnavailable,
    TarryError,
    UnknownEventType,
)
from tarry.model import NewEvent, NewRun, RunStatus
from tarry.store.base import Store

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(("error", "bases", "details"), [
    (RunNotFound("r1"), (NotFound, RunError), {"kind": "run", "key": "r1"}),
    (FlowNotFound("no flow named 'x'", key="x"), (NotFound,), {"kind": "flow", "key": "x"}),
    (EventNotFound("e1"), (NotFound, EventError), {"kind": "event", "key": "e1"}),
    (UnknownEventType("a.b", "unknown event type 'a.b'"), (NotFound, EventError),
     {"kind": "event type", "key": "a.b"}),
    (RunStateError("r1", "succeeded", "run r1 already succeeded"), (Conflict, RunError),
     {"kind": "run", "key": "r1", "state": "succeeded"}),
    (EventStateError("e1", "delivered", "event 'e1' is delivered"), (Conflict, EventError),
     {"kind": "event", "key": "e1", "state": "delivered"}),
    (InvalidRunRequest(["input 'a' is required", "unknown input 'b'"]),
     (InvalidRequest, RunError), {"problems": ["input 'a' is required", "unknown input 'b'"]}),
    (StoreUnavailable("PostgreSQL store unavailable: refused", retry_after=2.0),
     (StoreError,), {"retry_after": 2.0}),
])
def test_each_error_has_its_api_base_its_family_and_structured_details(
        error: TarryError, bases: tuple[type[TarryError], ...],
        details: dict[str, object]) -> None:
    assert all(isinstance(error, base) for base in bases)
    assert error.details == details


def test_the_api_bases_are_disjoint() -> None:
    bases = (NotFound, Conflict, InvalidRequest, StoreUnavailable)
    for error in (RunNotFound("r"), RunStateError("r", "failed", "m"),
                  InvalidRunRequest("m"), StoreUnavailable("m")):
        assert sum(isinstance(error, base) for base in bases) == 1


def test_an_invalid_request_joins_its_problems_into_its_message() -> None:
    assert str(InvalidRunRequest(["input 'a' is required", "unknown input 'b'"])) == (
        "input 'a' is required; unknown input 'b'")
    assert InvalidRequest("one problem").problems == ["one problem"]


def test_a_plain_error_has_no_details() -> None:
    assert TarryError("x").details == {}


def test_the_store_raises_the_api_bases(store: Store) -> None:
    with pytest.raises(NotFound) as missing_run:
        store.get_run("nope")
    assert missing_run.value.details == {"kind": "run", "key": "nope"}
    with pytest.raises(NotFound) as missing_event:
        store.get_event("nope")
    assert missing_event.value.details == {"kind": "event", "key": "nope"}
    store.create_run(NewRun(id="r1", flow="f", flow_digest="d", status=RunStatus.SUCCEEDED,
                            inputs={}, target=None, created_at=NOW, due_at=None), [])
    with pytest.raises(Conflict) as ended:
        store.cancel("r1", "alice", NOW)
    assert ended.value.details == {"kind": "run", "key": "r1", "state": "succeeded"}
    store.record_event(NewEvent(id="e1", type="t", data={}, received_at=NOW, match_key="k",
                                errors=(), buffer_until=None), NOW)
    store.discard("e1", NOW)
    with pytest.raises(Conflict, match=r"^event 'e1' is discarded; only invalid") as refused:
        store.discard("e1", NOW)
    assert refused.value.details == {"kind": "event", "key": "e1", "state": "discarded"}
