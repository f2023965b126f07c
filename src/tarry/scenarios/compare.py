"""Comparing what a scenario expects with what its runs came to. Pure: no engine, no store.

:func:`compare` takes the scenario and an :class:`Observed` (the run document with its
history, the runs triggers started, the stub call counts, the scripted events' fates) and
returns one :class:`Mismatch` per failed expectation — every one, not only the first — plus
one per scripted event that could not be sent.

The runs of ``expect.runs`` are paired with the runs triggers started by their names (flow,
target, occurrence), in order, as a diff pairs lines: a run expected but not started, and one
started but not expected, are each a mismatch saying what the triggers did start; a paired
run's own expectations are then checked against its document.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from tarry.clock import iso
from tarry.language.model import Position
from tarry.scenarios.model import Expectation, ExpectedRun, Scenario
from tarry.scenarios.started import StartedRun

__all__ = ["Mismatch", "Missing", "Observed", "compare", "json_equal", "lookup"]

_SEGMENT = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


@dataclass(frozen=True)
class Observed:
    """What a scenario's run came to.

    ``event_states`` holds the final state of each scripted event (None when it was not
    sent); ``unsent`` says why, for each event that was not sent, by index.
    """

    document: Mapping[str, Any]
    calls: Mapping[str, int] = field(default_factory=dict)
    event_states: tuple[str | None, ...] = ()
    unsent: Mapping[int, str] = field(default_factory=dict)
    unanswered: Mapping[int, str] = field(default_factory=dict)
    """Why each scripted task answer (by index) was not given or was refused."""
    started: tuple[StartedRun, ...] = ()
    """The runs triggers started, in the order they were created."""
    quiet: tuple[str, ...] = ()
    """Why each scripted event that started no run started none, one line each."""
    window: tuple[datetime, datetime] | None = None
    """The virtual time the scenario covered: its start and its horizon."""


@dataclass(frozen=True)
class Missing:
    """The actual value of a binding path that does not exist: ``at`` is its first absent
    prefix (``approval.event`` when ``approval`` has no ``event``)."""

    at: str


@dataclass(frozen=True)
class Mismatch:
    """One failed expectation (or unsent event), where it was written, expected and actual.

    ``note`` explains a failure that is not a plain difference of values; ``details`` are
    lines that go with it (what happened instead).
    """

    label: str
    pos: Position
    expected: Any = None
    actual: Any = None
    note: str = ""
    details: tuple[str, ...] = ()


def compare(scenario: Scenario, observed: Observed) -> tuple[Mismatch, ...]:
    """Every mismatch between ``scenario``'s expectations and ``observed``, in file order."""
    unsent = [Mismatch(event.describe(index), event.pos, note=observed.unsent[index])
              for index, event in enumerate(scenario.events) if index in observed.unsent]
    unsent += [Mismatch(task.describe(index), task.pos, note=observed.unanswered[index])
               for index, task in enumerate(scenario.tasks) if index in observed.unanswered]
    failed = [mismatch for expectation in scenario.expectations
              if (mismatch := _check(expectation, observed)) is not None]
    if scenario.runs_pos is not None:
        failed += _check_runs(scenario.runs, scenario.runs_pos, observed)
    return tuple(sorted([*unsent, *failed], key=lambda m: (m.pos.line, m.pos.column)))


def _check_runs(expected: Sequence[ExpectedRun], pos: Position,
                observed: Observed) -> Iterator[Mismatch]:
    """The runs triggers started against ``expect.runs`` (written at ``pos``)."""
    started = observed.started
    matcher = difflib.SequenceMatcher(a=[run.identity() for run in expected],
                                      b=[run.identity for run in started], autojunk=False)
    for tag, low, high, first, last in matcher.get_opcodes():
        if tag == "equal":
            for index, run in zip(range(low, high), started[first:last], strict=True):
                yield from _check_run(index, expected[index], run)
            continue
        for index in range(low, high):
            yield Mismatch(expected[index].describe(index), expected[index].pos,
                           note=f"not started{_outside(expected[index], observed.window)}; "
                                "the triggers started "
                                + ("these runs:" if started else "no run"),
                           details=_what_started(observed))
        for run in started[first:last]:
            yield Mismatch("runs", pos, note=f"not listed: {run.describe()}")


def _outside(run: ExpectedRun, window: tuple[datetime, datetime] | None) -> str:
    """Why an expected occurrence could not have been created, when it lies outside the
    scenario's time."""
    if run.scheduled_at is None or window is None:
        return ""
    if run.scheduled_at <= window[0]:
        return f" (it lies before the start, {iso(window[0])}: a schedule fires after it)"
    if run.scheduled_at > window[1]:
        return f" (it lies past the horizon, {iso(window[1])})"
    return ""


def _what_started(observed: Observed) -> tuple[str, ...]:
    """What the triggers did start, and why each scripted event that started none did not."""
    return (*(run.describe() for run in observed.started), *observed.quiet)


def _check_run(index: int, expected: ExpectedRun, run: StartedRun) -> Iterator[Mismatch]:
    """The expectations of one run a trigger started, labelled with the run."""
    seen = Observed(document=run.document)
    for expectation in expected.expectations:
        mismatch = _check(expectation, seen)
        if mismatch is not None:
            yield replace(mismatch, label=f"{expected.describe(index)} {mismatch.label}")


def _check(expectation: Expectation, observed: Observed) -> Mismatch | None:
    actual = _ACTUAL[expectation.kind](observed, expectation)
    if expectation.kind == "history_contains":
        return _check_subsequence(expectation, actual)
    if json_equal(expectation.expected, actual):
        return None
    return Mismatch(expectation.label, expectation.pos, expectation.expected, actual)


def _check_subsequence(expectation: Expectation, actual: list[str]) -> Mismatch | None:
    remaining = iter(actual)
    for index, kind in enumerate(expectation.expected):
        if kind not in remaining:  # consumes the iterator up to the match: order is kept
            after = f" after '{expectation.expected[index - 1]}'" if index else ""
            return Mismatch(expectation.label, expectation.pos, expectation.expected, actual,
                            note=f"no '{kind}'{after} in the history")
    return None


def json_equal(left: Any, right: Any) -> bool:
    """Equality of JSON values: ``true`` is not ``1``, ``1`` is ``1.0``, order of keys aside."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, Sequence) and not isinstance(left, str):
        return (isinstance(right, Sequence) and not isinstance(right, str)
                and len(left) == len(right) and all(map(json_equal, left, right)))
    if left != right:
        return False
    return type(left) is type(right) or (_is_number(left) and _is_number(right))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def lookup(bindings: Mapping[str, Any], path: str) -> Any:
    """The value at ``path`` (``approval.event.approved``, ``polls[1].check``) in
    ``bindings``, or :class:`Missing` naming the first prefix that does not exist."""
    value: Any = bindings
    walked = ""
    for index, name in _SEGMENT.findall(path):
        walked += f"[{index}]" if index else (f".{name}" if walked else name)
        if index and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        elif name and isinstance(value, Mapping) and name in value:
            value = value[name]
        else:
            return Missing(walked)
    return value


def _error(observed: Observed, expectation: Expectation) -> Any:
    """The run's error, narrowed to the fields the expectation names."""
    error = observed.document["error"]
    if error is None or not isinstance(expectation.expected, Mapping):
        return error
    return {name: error.get(name) for name in expectation.expected}


def _kinds(observed: Observed, expectation: Expectation) -> list[str]:
    return [entry["kind"] for entry in observed.document["history"]]


_ACTUAL: dict[str, Callable[[Observed, Expectation], Any]] = {
    "status": lambda observed, _: observed.document["status"],
    "exit": lambda observed, _: observed.document["exit"],
    "reason": lambda observed, _: observed.document["reason"],
    "error": _error,
    "bindings": lambda observed, expectation: lookup(observed.document["bindings"],
                                                     expectation.key or ""),
    "calls": lambda observed, expectation: observed.calls.get(expectation.key or "", 0),
    "history": _kinds,
    "history_contains": _kinds,
    "events": lambda observed, _: list(observed.event_states),
    "inputs": lambda observed, _: observed.document["inputs"],
}
