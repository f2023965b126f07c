"""The journal of a Python flow's run: what each operation recorded, and in which order.

A Python flow is re-executed from the top every time its run resumes. Each ``ctx``
operation first asks its :class:`Scope` (the flow itself, or one branch of a ``parallel`` /
``map``) for its place: the n-th call of a scope must be the operation the run recorded
n-th, with the same kind and name, or the run fails with a
:class:`~tarry.errors.NondeterminismError` naming what changed. A recorded operation returns
what it recorded; a new one executes and records.

The journal is one JSON document in the run's state, so resuming costs one read and
in-memory lookups however many operations the run recorded::

    {"ops":   {"reserve": {"result": …}, "fan[0].ask": {"until": …}, "#3": {"value": …}},
     "order": {"": [["step", "reserve"], ["parallel", "fan"], ["now", "#3"]],
               "fan[0].": [["wait_for_event", "ask"]]}}

``ops`` maps an operation's path (the scope's prefix, then its name — or ``#n``, its place
in the scope, when unnamed) to what it recorded; ``order`` lists each scope's operations as
``[kind, name]`` in call order. A patch marker (:mod:`tarry.sdk.patches`) takes a place like
an operation, kind ``patch``, name ``#patch:<id>``.

A journal opened ``dry`` (``tarry replay``'s check) executes nothing new: each scope stops
(suspends, waiting for nothing) at the first operation the run has not finished, and at any
operation it never recorded, so only what the run recorded is replayed and checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from tarry.engine.journal import BRANCHING, is_finished
from tarry.engine.outcome import WaitInfo
from tarry.errors import NondeterminismError

__all__ = ["ContinuedAsNew", "Journal", "Operation", "Scope", "Suspend", "describe"]

_KEY = "journal"
_CHANGED = "its code changed while the run was in progress"


class Suspend(BaseException):
    """Unwinds a flow function whose scope must wait; carries what it waits for.

    A ``BaseException``, so that a flow's ``except Exception`` cannot swallow it.
    """

    def __init__(self, waits: tuple[WaitInfo, ...]) -> None:
        super().__init__(waits)
        self.waits = waits


class ContinuedAsNew(BaseException):
    """Unwinds a flow function that called ``ctx.continue_as_new``; carries the successor's
    inputs (checked against the flow). A ``BaseException``, as :class:`Suspend`, so that a
    flow's ``except Exception`` cannot swallow it."""

    def __init__(self, inputs: dict[str, Any]) -> None:
        super().__init__("the run continues as new")
        self.inputs = inputs


class Journal:
    """The recorded operations of one run, kept in (and mutating) its state."""

    def __init__(self, state: dict[str, Any], *, dry: bool = False) -> None:
        document = state.setdefault(_KEY, {"ops": {}, "order": {}})
        self.ops: dict[str, dict[str, Any]] = document["ops"]
        self._order: dict[str, list[list[str]]] = document["order"]
        self.dry = dry
        """Execute nothing new: stop each scope at the first operation not finished."""
        self.broken: NondeterminismError | None = None
        """The first mismatch found: the run fails with it even if the flow caught it."""
        self.patches: dict[str, bool] = {}
        """What each patch id came to in this advance (one answer per id and run)."""

    def recorded_kinds(self, kind: str) -> Iterator[str]:
        """The names of every operation of ``kind`` recorded in any scope."""
        for listed in self._order.values():
            yield from (name for each, name in listed if each == kind)

    def order(self, prefix: str) -> list[list[str]]:
        """The ``[kind, name]`` of each operation the scope ``prefix`` recorded, in order."""
        return self._order.setdefault(prefix, [])

    def size(self) -> int:
        """How many operations the run recorded."""
        return len(self.ops)


PATCH = "patch"
"""The kind of a patch marker in the journal's order."""

PATCH_PREFIX = "#patch:"
"""What begins a patch marker's name (no operation's name can begin with ``#``)."""


def describe(kind: str, name: str) -> str:
    """An operation for a message: ``step 'reserve'``, ``unnamed now (#3)``, or
    ``patch 'new-tax'``."""
    if kind == PATCH:
        return f"patch '{name.removeprefix(PATCH_PREFIX)}'"
    return f"unnamed {kind} ({name})" if name.startswith("#") else f"{kind} '{name}'"


class Operation:
    """One call of a ``ctx`` operation: its place, and what it recorded (``entry``)."""

    def __init__(self, journal: Journal, kind: str, path: str) -> None:
        self.journal = journal
        self.kind = kind
        self.path = path
        self.entry: dict[str, Any] | None = journal.ops.get(path)

    def record(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Keep ``entry`` as what this operation recorded (mutable until it is final)."""
        self.journal.ops[self.path] = entry
        self.entry = entry
        return entry


class Scope:
    """The operations of one context: the flow, or one branch of a ``parallel`` / ``map``.

    ``prefix`` begins every operation path of the scope (``""`` for the flow,
    ``"fan[0]."`` for the first branch of ``fan``); ``label`` names it in messages.
    """

    def __init__(self, journal: Journal, prefix: str, label: str) -> None:
        self.journal = journal
        self.prefix = prefix
        self.label = label
        self._recorded = journal.order(prefix)
        self._names: set[str] | None = None
        self._position = 0
        self._running: str | None = None
        self._suspension: BaseException | None = None

    def enter(self, kind: str, name: str | None) -> Operation:
        """Take the next place in the scope for an operation of ``kind`` named ``name``.

        Raises NondeterminismError when the run recorded something else there, ValueError
        for a name used twice, and RuntimeError while another operation of the scope is
        still running. Once the scope suspended, every operation suspends again at once.
        """
        if self._suspension is not None:
            raise self._suspension
        position = self._position
        recorded = self._recorded[position] if position < len(self._recorded) else None
        if name is None:
            local = f"#{position + 1}"
        elif recorded is not None and name == recorded[1]:
            local = name  # a replay: the name was checked when it was recorded
        else:
            local = _checked_name(name)
        self.ready(kind, local)
        if recorded is not None:
            recorded_kind, recorded_name = recorded
            if (recorded_kind, recorded_name) != (kind, local):
                raise self.changed(position, describe(recorded_kind, recorded_name),
                                   describe(kind, local), recorded_name)
            if self.journal.dry and kind not in BRANCHING and not is_finished(
                    kind, self.journal.ops.get(self.prefix + local)):
                self.suspend()
            self._position += 1
            return Operation(self.journal, kind, self.prefix + local)
        return self.mark(kind, local)

    def ready(self, kind: str, local: str) -> None:
        """Check that an operation of ``kind`` named ``local`` may take the next place:
        suspend again if the scope suspended, RuntimeError while another operation of the
        scope is still running."""
        if self._suspension is not None:
            raise self._suspension
        if self._running is not None:
            raise RuntimeError(
                f"{self.label}: {describe(kind, local)} started while {self._running} is still "
                "running; await each operation before starting the next, or run them "
                "concurrently with ctx.parallel or ctx.map")

    def recorded_here(self) -> tuple[str, str] | None:
        """The ``(kind, name)`` the run recorded at the scope's next place; None past the
        last one (where the flow runs code the run has not run yet)."""
        if self._position < len(self._recorded):
            kind, name = self._recorded[self._position]
            return kind, name
        return None

    def skip(self) -> None:
        """Take the next place as it was recorded (a patch marker the code accepts)."""
        self._position += 1

    def mark(self, kind: str, local: str) -> Operation:
        """Record a new operation (or marker) at the next place, past the last recorded one;
        a dry journal suspends instead."""
        if self.journal.dry:
            self.suspend()
        self._claim(kind, local)
        self._position += 1
        return Operation(self.journal, kind, self.prefix + local)

    @property
    def busy(self) -> str | None:
        """The operation of the scope in progress (described), if one is."""
        return self._running

    @contextmanager
    def running(self, operation: Operation) -> Iterator[None]:
        """Mark ``operation`` as in progress (no other operation of the scope may start)."""
        self._running = describe(operation.kind, operation.path.removeprefix(self.prefix))
        try:
            yield
        finally:
            self._running = None

    def suspend(self, *waits: WaitInfo) -> None:
        """Suspend the scope on ``waits``: raise :class:`Suspend`, and again from any later
        operation of the scope (so cleanup code unwinding a suspended flow does nothing)."""
        self._suspension = Suspend(tuple(waits))
        raise self._suspension

    def end(self, ending: BaseException) -> NoReturn:
        """Unwind the scope with ``ending`` (a :class:`ContinuedAsNew`), raised again from any
        later operation of the scope, as :meth:`suspend` does."""
        self._suspension = ending
        raise ending

    def finish(self) -> None:
        """The scope's code returned: it must have asked for every operation recorded."""
        position = self._position
        if position < len(self._recorded):
            kind, name = self._recorded[position]
            raise self.changed(position, describe(kind, name), None, name)

    def changed(self, position: int, recorded: str, requested: str | None,
                name: str) -> NondeterminismError:
        """The error for a scope whose ``position``-th operation is not what was recorded
        (remembered by the journal: the run fails with it whatever the flow does)."""
        now = (f"the code now asks for {requested}" if requested is not None
               else "the code now returns without it")
        error = NondeterminismError(
            f"{self.label} changed at operation {position + 1}: the run recorded {recorded}, "
            f"{now}; {_CHANGED}",
            operation=self.prefix + name, recorded=recorded, requested=requested)
        if self.journal.broken is None:
            self.journal.broken = error
        return error

    def _claim(self, kind: str, name: str) -> None:
        if self._names is None:
            self._names = {recorded_name for _, recorded_name in self._recorded}
        if name in self._names:
            raise ValueError(f"{self.label} uses the operation name '{name}' twice; names "
                             "must be unique within the flow and within each branch")
        self._names.add(name)
        self._recorded.append([kind, name])


def _checked_name(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"an operation name must be a string or None, got "
                        f"{type(name).__name__}")
    if not name or name.startswith("#") or "[" in name or "]" in name:
        raise ValueError(f"operation name {name!r} is invalid: use a non-empty name without "
                         "'[' or ']' that does not start with '#'")
    return name
