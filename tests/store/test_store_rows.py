"""The backend-neutral mapping between records and rows."""

from __future__ import annotations

import pytest
from store_samples import T0, at, entry

from tarry.clock import to_millis
from tarry.model import CheckpointOutcome, RunStatus, RunUpdate
from tarry.store.rows import checkpoint_outcome, history_params, update_params


def _update(status: RunStatus, *, release: bool = True) -> RunUpdate:
    return RunUpdate(run_id="r1", status=status, state={"a": [1]}, history=[],
                     release=release, due_at=at(60))


@pytest.mark.parametrize(("status", "release", "expected"), [
    (RunStatus.WAITING, True, (True, to_millis(at(60)))),
    (RunStatus.RUNNING, False, (False, to_millis(at(60)))),
    (RunStatus.SUCCEEDED, False, (True, None)),
    (RunStatus.CANCELLED, True, (True, None)),
])
def test_terminal_updates_always_release_and_are_never_due(
        status: RunStatus, release: bool, expected: tuple[bool, int | None]) -> None:
    params = update_params("w1", T0, _update(status, release=release))
    assert (params["release"], params["due_at"]) == expected


def test_update_params_store_payloads_as_compact_json() -> None:
    params = update_params("w1", T0, _update(RunStatus.WAITING))
    assert (params["state"], params["error"], params["now"]) == ('{"a":[1]}', None,
                                                                  to_millis(T0))


@pytest.mark.parametrize(("status", "release", "requested", "expected"), [
    (RunStatus.WAITING, True, False, CheckpointOutcome.SAVED),
    (RunStatus.WAITING, True, True, CheckpointOutcome.CANCELLED),
    (RunStatus.RUNNING, False, True, CheckpointOutcome.CANCEL_REQUESTED),
    (RunStatus.SUCCEEDED, True, True, CheckpointOutcome.SAVED),
])
def test_a_cancel_request_matters_only_to_a_run_that_goes_on(
        status: RunStatus, release: bool, requested: bool,
        expected: CheckpointOutcome) -> None:
    assert checkpoint_outcome(_update(status, release=release), requested) is expected


def test_history_params_keep_unicode_readable() -> None:
    [params] = history_params("r1", [entry("note", 1, who="Zoë")])
    assert params == {"run_id": "r1", "at": to_millis(at(1)), "kind": "note", "step": None,
                      "data": '{"who":"Zoë"}'}
