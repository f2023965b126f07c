"""Whether a waiting YAML run can move to a new definition of its flow, and its state there.

A YAML run keeps the definition it started with; ``tarry runs migrate`` moves a held or
waiting run to another one (a fixed flow file). This module decides, purely: a run's state,
its journal, its old and its new definition in; whether it can move (with every reason it
cannot) and the state it has on the new definition out. The store writes that state only if
the run is still as it was read (:meth:`tarry.store.base.Store.move_run`).

The rules, walking the run's live path (every step in progress, from the top-level scope
down: a group's steps, a ``repeat``'s iteration, each live branch of a ``for_each``, the
steps of a reminder being sent, a scope's ``recover`` steps):

1. **Every live step is in the new definition, at the same path.** Its id must be in the
   same scope (among the ``recover`` steps when it is recovering), so that the step path
   under which its event waits, task, inbox and journal entries are kept still names it. A
   step that moved within its scope is found by its id. A scope that has begun nothing yet
   (a ``repeat`` paused before its next iteration) runs the new definition's steps whole.
2. **With the same construct**: a ``wait_for`` stays a ``wait_for``, a ``repeat`` a
   ``repeat``, and so on.
3. **Waiting for the same thing.** A ``wait_for`` must wait for the same events with the
   same match values (the new definition's ``match`` is computed for the run as its
   registration would; values that differ, or cannot be computed, refuse the move): the
   event index keeps finding the run. An ``ask`` must offer the same ``outcomes`` and
   ``form`` as the task already open. A ``repeat`` must allow the iteration in progress
   (its ``max`` above it).
4. **Bindings named by the steps ahead exist.** A step still to run (or a recover step) that
   names a step the new definition puts *before* the live one, which this run never ran, or
   an input the run was started without, refuses the move.

What a wait decided is kept: its deadline, a timer's instant, a repeat's next poll, a retry's
instant, the task's text. Reminders follow the new definition: a reminder scheduled while the
new wait has no ``remind`` (or already sent its ``max``) is dropped; a wait that gets a
``remind`` schedules its first reminder ``every`` after the move. Then what the run waits
for changed, and the move makes it due at once, so that a worker works out its waits again.

A held run has not started: it always moves, and keeps the hold it was started with.
"""

from __future__ import annotations

import copy
import json
from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tarry._suggest import did_you_mean
from tarry.clock import iso
from tarry.engine.journal import names_read, whole_state
from tarry.engine.values import to_json
from tarry.errors import ExpressionError, InvalidValue
from tarry.language.expressions import EvalContext, render
from tarry.language.model import (
    Action,
    Ask,
    BusinessTime,
    Construct,
    Exit,
    Fail,
    Flow,
    ForEach,
    Group,
    Remind,
    Repeat,
    Scope,
    Step,
    Wait,
    WaitFor,
)
from tarry.model import JournalEntry

__all__ = ["Judgement", "RunView", "judge"]

Names = ChainMap[str, Any]
Address = tuple[str, ...]
"""The keys leading from a state's top to one of its frames or step states."""

_DROP = object()
"""An edit's value that removes the key."""

_CONSTRUCT_NAMES: dict[type[Construct], str] = {
    Action: "an action", Wait: "a wait", WaitFor: "a wait_for", Ask: "an ask",
    Repeat: "a repeat", ForEach: "a for_each", Group: "a group", Exit: "an exit",
    Fail: "a fail"}


@dataclass(frozen=True)
class RunView:
    """What the rules read of one run: its ``state`` as the store keeps it (the live path,
    upgraded to the current version), its ``journal``, its ``inputs`` and the ``run`` names
    its expressions see (``id``, ``target``, ``started_at``)."""

    state: Mapping[str, Any]
    journal: Sequence[JournalEntry] = ()
    inputs: Mapping[str, Any] = field(default_factory=dict)
    run_info: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Judgement:
    """Whether the run can move: every reason it cannot (none: it moves), and the state it
    has on the new definition (as the store keeps it; None when it cannot move). ``wake``:
    what the run waits for changed (a reminder scheduled or dropped), so it must be looked at
    again at once."""

    reasons: tuple[str, ...]
    state: dict[str, Any] | None = None
    wake: bool = False

    @property
    def movable(self) -> bool:
        """Whether the run can move."""
        return not self.reasons


def judge(view: RunView, old: Flow, new: Flow, now: datetime) -> Judgement:
    """Whether the run ``view`` of ``old`` can move to ``new`` at ``now`` (the module
    docstring lists the rules), and its state there."""
    state = view.state
    if "root" not in state:  # held (or not started): nothing in progress to place
        return Judgement((), copy.deepcopy(dict(state)))
    whole = whole_state(copy.deepcopy(dict(state)), view.journal)
    walk = _Walk(new, now, set(view.inputs))
    names: Names = ChainMap({"run": dict(view.run_info)}, dict(view.inputs))
    walk.scope(old.body, new.body, whole["root"], _Place(names, "", ("root",)))
    if walk.reasons:
        return Judgement(tuple(dict.fromkeys(walk.reasons)))
    moved = copy.deepcopy(dict(state))
    for address, key, value in walk.edits:
        target = _at(moved, address)
        if value is _DROP:
            target.pop(key, None)
        else:
            target[key] = value
    return Judgement((), moved, walk.wake)


def _at(state: dict[str, Any], address: Address) -> dict[str, Any]:
    found = state
    for key in address:
        found = found[key]
    return found


@dataclass(frozen=True)
class _Place:
    """Where the walk is: the names expressions see there, the step path (or, for a scope,
    the prefix of its steps' paths) and the address of its frame or step state."""

    names: Names
    path: str
    address: Address

    def below(self, path: str, *keys: str, names: Mapping[str, Any] | None = None) -> _Place:
        """A place under this one, at ``path``, its address ``keys`` further down."""
        scope = self.names if names is None else self.names.new_child(dict(names))
        return _Place(scope, path, (*self.address, *keys))


class _Walk:
    """One judgement's walk down the live path: the reasons found, the edits to make."""

    def __init__(self, new: Flow, now: datetime, inputs: set[str]) -> None:
        self.new = new
        self.now = now
        self.inputs = inputs
        self.reasons: list[str] = []
        self.edits: list[tuple[Address, str, Any]] = []
        self.wake = False
        self.missing: set[str] = set()
        """The inputs the run lacks that a step ahead reads, reported already."""

    def scope(self, old: Scope, new: Scope, frame: dict[str, Any], place: _Place) -> None:
        """Place the live step of ``frame`` (a scope of ``old``) in ``new``, and its own live
        steps below it. (A step ahead in a nested scope that names an enclosing scope's step
        is judged with its container, a step ahead of the enclosing scope.)"""
        recovering = frame.get("phase") == "recover"
        old_steps = old.recover if recovering else old.steps
        new_steps = new.recover if recovering else new.steps
        at = frame.get("at", 0)
        if at >= len(old_steps):
            return
        if at == 0 and "cur" not in frame:  # not begun (a repeat's next iteration): all new
            self._bindings(new_steps, frozenset(), place.names.new_child(frame.get("b", {})),
                           place.path)
            return
        step = old_steps[at]
        prefix = place.path
        path = prefix + step.id
        ids = [each.id for each in new_steps]
        if step.id not in ids:
            kind = "recover step" if recovering else "step"
            self.reasons.append(f"{kind} '{path}' is not in the new definition"
                                f"{did_you_mean(step.id, ids)}")
            return
        new_at = ids.index(step.id)
        if new_at != at:
            self.edits.append((place.address, "at", new_at))
        local = place.names.new_child(frame.get("b", {}))
        if recovering:
            local = local.new_child({"error": frame.get("error")})
        before = frozenset(ids[:new_at])
        ahead = [*new_steps[new_at:], *(() if recovering else new.recover)]
        self._bindings(ahead, before, local, prefix)
        new_step = new_steps[new_at]
        if type(step.construct) is not type(new_step.construct):
            self.reasons.append(
                f"step '{path}' is {_CONSTRUCT_NAMES[type(step.construct)]} in the run's "
                f"definition and {_CONSTRUCT_NAMES[type(new_step.construct)]} in the new one")
            return
        cur = frame.get("cur")
        if isinstance(cur, dict):
            self.step(step, new_step, cur, _Place(local, path, (*place.address, "cur")))

    def _bindings(self, ahead: Sequence[Step], before: frozenset[str], names: Names,
                  prefix: str) -> None:
        """Refuse the steps ahead that name a binding this run cannot have: a step the new
        definition puts before the live one, or an input the run was started without."""
        declared = frozenset(self.new.inputs)
        for step in ahead:
            read = names_read(step)
            for name in sorted(read & before):
                if name not in names:
                    self.reasons.append(
                        f"step '{prefix}{step.id}' reads '{name}', which this run has not "
                        f"bound: the new definition puts step '{name}' before where the run "
                        "is")
            for name in sorted((read & declared) - self.inputs - self.missing):
                self.missing.add(name)  # once, at its outermost reader
                self.reasons.append(f"step '{prefix}{step.id}' reads input '{name}', which "
                                    "this run was started without")

    def step(self, old: Step, new: Step, cur: dict[str, Any], place: _Place) -> None:
        """The construct-specific rules of a live step (both of one construct)."""
        construct, path = new.construct, place.path
        if isinstance(construct, Group):
            assert isinstance(old.construct, Group)
            if isinstance(cur.get("frame"), dict):
                self.scope(old.construct.steps, construct.steps, cur["frame"],
                           place.below(path + ".", "frame"))
        elif isinstance(construct, Repeat):
            assert isinstance(old.construct, Repeat)
            self._repeat(old.construct, construct, cur, place)
        elif isinstance(construct, ForEach):
            assert isinstance(old.construct, ForEach)
            self._for_each(old.construct, construct, cur, place)
        elif isinstance(construct, WaitFor):
            assert isinstance(old.construct, WaitFor)
            self._events(construct, cur, place)
            self._remind(old.construct.remind, construct.remind, cur, place)
        elif isinstance(construct, Ask):
            assert isinstance(old.construct, Ask)
            self._task(construct, cur, path)
            self._remind(old.construct.remind, construct.remind, cur, place)

    def _repeat(self, old: Repeat, new: Repeat, cur: dict[str, Any], place: _Place) -> None:
        index = int(cur.get("i", 0))
        if index >= new.max:
            self.reasons.append(f"step '{place.path}' is in its iteration {index + 1}, beyond "
                                f"the new definition's max of {new.max}")
            return
        if isinstance(cur.get("frame"), dict):
            self.scope(old.steps, new.steps, cur["frame"], place.below(
                f"{place.path}[{index}].", "frame",
                names={"loop": {"index": index, "first": index == 0}}))

    def _for_each(self, old: ForEach, new: ForEach, cur: dict[str, Any], place: _Place) -> None:
        items = cur.get("items") or []
        for key, frame in sorted(cur.get("live", {}).items(), key=lambda kv: int(kv[0])):
            index = int(key)
            item = items[index] if index < len(items) else None
            self.scope(old.steps, new.steps, frame, place.below(
                f"{place.path}[{index}].", "live", key,
                names={new.as_: item, "loop": {"index": index, "first": index == 0}}))

    def _events(self, new: WaitFor, cur: dict[str, Any], place: _Place) -> None:
        """The new wait must wait for the very events the run waits for."""
        registered = cur.get("alternatives")
        if not isinstance(registered, list):
            return  # not registered yet: the new definition registers it
        context = EvalContext(now=self.now, timezone=self.new.timezone)
        try:
            computed = [{"type": alt.event,
                         "match": to_json(render(alt.match, place.names, context))}
                        for alt in new.alternatives]
        except (ExpressionError, InvalidValue) as exc:
            self.reasons.append(f"step '{place.path}': the new definition's match cannot be "
                                f"computed for this run ({exc})")
            return
        if _canonical(computed) != _canonical(registered):
            self.reasons.append(f"step '{place.path}' waits for {_described(registered)}; the new "
                                f"definition would wait for {_described(computed)}")

    def _task(self, new: Ask, cur: dict[str, Any], path: str) -> None:
        """The new ask must offer what the task already open offers."""
        task = cur.get("task")
        if not isinstance(task, dict):
            return
        if list(new.outcomes) != list(task.get("outcomes", [])):
            self.reasons.append(
                f"step '{path}' has a task open with the outcomes {_listed(task['outcomes'])}; "
                f"the new definition's are {_listed(new.outcomes)}")
        if new.form != task.get("form"):
            self.reasons.append(f"step '{path}' has a task open with another form than the "
                                "new definition's")

    def _remind(self, old: Remind | None, new: Remind | None, cur: dict[str, Any],
                place: _Place) -> None:
        """A reminder in progress must go on in the new definition's ``remind``; a scheduled
        one follows the new ``remind`` (see the module docstring)."""
        if isinstance(cur.get("remind_frame"), dict):
            if new is None or old is None:
                self.reasons.append(f"step '{place.path}' is sending a reminder, and the new "
                                    "definition's step has no remind")
                return
            self.scope(old.steps, new.steps, cur["remind_frame"],
                       place.below(f"{place.path}.remind.", "remind_frame"))
            return
        if "until" not in cur:
            return
        sent = int(cur.get("reminders", 0))
        done = new is None or (new.max is not None and sent >= new.max)
        if done and "remind_at" in cur:
            self.edits.append((place.address, "remind_at", _DROP))
            self.wake = True
        elif not done and "remind_at" not in cur:
            assert new is not None
            if isinstance(new.every, BusinessTime):
                self.reasons.append(f"step '{place.path}' would begin reminders counted on "
                                    f"calendar '{new.every.calendar}'; a move does not "
                                    "schedule business time")
                return
            self.edits.append((place.address, "remind_at", iso(self.now + new.every)))
            self.wake = True


def _canonical(alternatives: Sequence[Mapping[str, Any]]) -> list[str]:
    return sorted(json.dumps([alt.get("type"), alt.get("match")], sort_keys=True)
                  for alt in alternatives)


def _described(alternatives: Sequence[Mapping[str, Any]]) -> str:
    return " or ".join(f"{alt.get('type')} {json.dumps(alt.get('match'), ensure_ascii=False)}"
                       for alt in alternatives)


def _listed(outcomes: Sequence[str]) -> str:
    return ", ".join(outcomes)
