"""A run's state in two parts: the live path in the run's row, and a journal of what completed.

A checkpoint costs what changed. What a run completed is appended to its journal once, as
:class:`~tarry.model.JournalEntry` rows, and never written again; the run row keeps only the
state still in progress. In memory a run's state is the whole tree the interpreter (or a
Python flow's replay) walks; this module moves between the two forms:

- **YAML flows**: a binding of a completed step of the flow's top-level scope is an entry
  (scope ``""``, key: the step id). A resume reads only the bindings the steps still ahead
  can name (their expressions' names, known at load), so a wake after 3 steps or 3,000 reads
  and writes the same. A ``for_each`` in progress journals its items once (scope ``items``,
  key: its name, ``each`` in its state) and each finished iteration once (scope
  ``done:<name>``, key: the index); its state keeps the count of items and the live
  iterations. A ``repeat`` in progress journals each finished iteration the same way (its
  name: ``repeat`` in its state). The walk reads the items back when it resumes the
  for_each, and a loop's finished iterations when the last one finishes
  (``Env.read_journal``). Other nested scopes (a group, a live iteration) are small and stay
  inline.
- **Python flows**: a finished operation is an entry (scope ``op``, key: its path; value:
  its scope, kind and record). Operations of one scope are sealed in call order, and only
  while every earlier one is sealed, so the order a replay checks is rebuilt exactly: the
  journal's entries first, then the live ones kept in the row. A ``parallel`` or ``map``
  journals each finished branch's result once (scope ``branch``, key: the branch's path,
  ``<op path>[<index>]``); its record keeps the count of branches, and what it has is put
  back together when it is read. A resume reads the whole journal once, since a replay
  re-executes the flow from the top.

:meth:`RunJournal.split` serialises: the live state and each new entry are encoded to JSON
text at the moment of the checkpoint, once, with nothing copied first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from itertools import islice
from typing import Any

from tarry.engine.frames import live_steps
from tarry.errors import ExpressionError
from tarry.language.expressions import compile_template
from tarry.language.model import Flow, Scope, Step, Template
from tarry.model import EncodedJSON, JournalEntry

__all__ = ["BINDINGS", "BRANCHES", "BRANCHING", "DONE", "ITEMS", "OPS", "JournalQuery",
           "RunJournal", "bindings_with", "is_finished", "journal_for", "names_read",
           "whole_state"]

BINDINGS = ""
"""The scope of the top-level bindings of a YAML flow's run."""

OPS = "op"
"""The scope of a Python flow's finished operations."""

BRANCHES = "branch"
"""The scope of the finished branches of a Python flow's ``parallel`` and ``map`` operations
(key: the branch's path, ``<op path>[<index>]``)."""

ITEMS = "items"
"""The scope of the items of a YAML run's ``for_each`` steps (key: the for_each's ``each``)."""

DONE = "done:"
"""The prefix of the scope of one loop's finished iterations (``done:<name>``, its name the
``each`` of a for_each's state or the ``repeat`` of a repeat's; key: the iteration's
index)."""

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _encoded(value: Any) -> EncodedJSON:
    return EncodedJSON(_ENCODER.encode(value))


@dataclass(frozen=True)
class JournalQuery:
    """What a resume reads of a run's journal: the entries of ``scopes``; in the scope
    ``selective``, only those whose key is in ``keys``."""

    scopes: tuple[str, ...]
    selective: str | None = None
    keys: tuple[str, ...] = ()


class RunJournal:
    """The journal side of one run's state while a worker advances it (see the module)."""

    def query(self, state: Mapping[str, Any]) -> JournalQuery | None:
        """What to read before advancing ``state``; None when there is nothing to read."""
        raise NotImplementedError

    def restore(self, state: dict[str, Any], entries: Sequence[JournalEntry]) -> None:
        """Put the entries read back into ``state`` (in place)."""
        raise NotImplementedError

    def split(self, state: dict[str, Any]) -> tuple[EncodedJSON, tuple[JournalEntry, ...]]:
        """The live state to write (encoded) and the entries completed since the last
        split; those count as written from now on."""
        raise NotImplementedError


def journal_for(flow: Flow, *, program: bool) -> RunJournal:
    """The journal of a run of ``flow`` (a Python flow's when ``program``)."""
    return OpsJournal() if program else BindingsJournal(flow)


# -- YAML flows ------------------------------------------------------------------------------


class BindingsJournal(RunJournal):
    """The top-level bindings of a YAML flow's run, each one an entry."""

    def __init__(self, flow: Flow) -> None:
        self.flow = flow
        self._written: set[str] = set()
        self._seen = 0
        """How many of the top-level bindings (in insertion order) the last split saw: a
        split looks only at those added since, so a checkpoint costs what changed."""

    def query(self, state: Mapping[str, Any]) -> JournalQuery | None:
        root = state.get("root")
        if root is None:
            return None
        names = names_ahead(self.flow.body, root["at"], root["phase"] == "recover")
        return JournalQuery((BINDINGS,), BINDINGS, tuple(sorted(names))) if names else None

    def restore(self, state: dict[str, Any], entries: Sequence[JournalEntry]) -> None:
        bindings = state["root"]["b"]
        for entry in entries:
            bindings[entry.key] = entry.value
            self._written.add(entry.key)

    def split(self, state: dict[str, Any]) -> tuple[EncodedJSON, tuple[JournalEntry, ...]]:
        root = state.get("root")
        if root is None:
            return _encoded(state), ()
        bindings: dict[str, Any] = root["b"]
        added = list(islice(reversed(bindings.items()), len(bindings) - self._seen))[::-1]
        fresh = [JournalEntry(BINDINGS, key, _encoded(value))
                 for key, value in added if key not in self._written]
        self._written.update(entry.key for entry in fresh)
        self._seen = len(bindings)
        loops = [(cur, name) for cur in live_steps(root) if (name := _loop_name(cur))]
        eaches = [cur for cur, _ in loops if "each" in cur]
        for cur in eaches:
            fresh.extend(_items_entry(cur))
        for cur, name in loops:
            fresh.extend(_finished_entries(cur, name))
        items = [cur.pop("items", None) for cur in eaches]  # written once, kept in memory
        root["b"] = {}
        try:
            live = _encoded(state)
        finally:
            root["b"] = bindings
            for cur, kept in zip(eaches, items, strict=True):
                if kept is not None:
                    cur["items"] = kept
        return live, tuple(fresh)


def _items_entry(cur: dict[str, Any]) -> list[JournalEntry]:
    """A for_each's items as an entry, the first time (``n`` records their count from then
    on)."""
    if "n" in cur:
        return []
    cur["n"] = len(cur["items"])
    return [JournalEntry(ITEMS, cur["each"], _encoded(cur["items"]))]


def _loop_name(cur: Mapping[str, Any]) -> str | None:
    """The name a loop in progress journals under (the ``each`` of a for_each's state, the
    ``repeat`` of a repeat's); None for any other step."""
    name = cur.get("each", cur.get("repeat"))
    return name if isinstance(name, str) else None


def _finished_entries(cur: dict[str, Any], name: str) -> list[JournalEntry]:
    """Every iteration the loop ``name`` finished since its last checkpoint, as entries
    (then dropped from its state: the journal holds them)."""
    fresh = [JournalEntry(DONE + name, index, _encoded(finished))
             for index, finished in cur["done"].items()]
    cur["done"] = {}
    return fresh


def names_ahead(body: Scope, at: int, recovering: bool) -> frozenset[str]:
    """Every binding a resume at position ``at`` of the top-level scope may read: the names
    the expressions of the rest of its steps and of its recover steps (or, recovering, of the
    rest of those) read, among those a step before ``at`` can have bound (a binding is named
    by its step; recovering, any main step may have)."""
    ahead = _ahead(body)
    if recovering:
        return frozenset(name for name in ahead.recover[at]
                         if name in ahead.steps_at or ahead.recover_at.get(name, at) < at)
    return frozenset(name for name in ahead.steps[at] | ahead.recover[0]
                     if ahead.steps_at.get(name, at) < at)


@dataclass(frozen=True)
class _Ahead:
    """What :func:`names_ahead` needs of a scope, computed once per loaded flow."""

    scope: Scope
    """Kept alive, so that its ``id`` is not reused while this is cached."""
    steps: list[frozenset[str]]
    """The names read from each step on."""
    recover: list[frozenset[str]]
    """The names read from each recover step on."""
    steps_at: dict[str, int]
    """The position of each step (its binding's name)."""
    recover_at: dict[str, int]
    """The position of each recover step."""


_AHEAD: dict[int, _Ahead] = {}
"""id(scope) → what :func:`names_ahead` needs of it."""


def _ahead(body: Scope) -> _Ahead:
    cached = _AHEAD.get(id(body))
    if cached is None or cached.scope is not body:
        cached = _Ahead(body, _suffix_names(body.steps), _suffix_names(body.recover),
                        _positions(body.steps), _positions(body.recover))
        _AHEAD[id(body)] = cached
    return cached


def _positions(steps: Sequence[Step]) -> dict[str, int]:
    return {step.id: index for index, step in enumerate(steps)}


def _suffix_names(steps: Sequence[Step]) -> list[frozenset[str]]:
    """``[names of steps[0:], names of steps[1:], …, frozenset()]``."""
    suffixes = [frozenset[str]()]
    for step in reversed(steps):
        suffixes.append(suffixes[-1] | names_read(step))
    return suffixes[::-1]


def names_read(node: Any) -> frozenset[str]:
    """The names every template anywhere inside ``node`` (a step, a construct, …) reads."""
    return frozenset(_names_in(node))


def _names_in(node: Any) -> Iterable[str]:
    """The names every template anywhere inside ``node`` (a step, a construct, …) reads."""
    if isinstance(node, Template):
        yield from _template_names(node.source)
    elif is_dataclass(node) and not isinstance(node, type):
        for field in fields(node):
            yield from _names_in(getattr(node, field.name))
    elif isinstance(node, Mapping):
        for key, value in node.items():
            yield from _names_in(key)
            yield from _names_in(value)
    elif isinstance(node, list | tuple):
        for value in node:
            yield from _names_in(value)
    elif isinstance(node, str) and "{{" in node:
        yield from _template_names(node)


def _template_names(source: str) -> frozenset[str]:
    try:
        return compile_template(source).names
    except ExpressionError:  # refused at load; fails its step at run time whatever it reads
        return frozenset()


# -- Python flows ----------------------------------------------------------------------------

_FINISHED: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "step": lambda entry: "result" in entry or "error" in entry,
    "now": lambda entry: "value" in entry,
    "random": lambda entry: "value" in entry,
    "wait": lambda entry: bool(entry.get("done")),
    "wait_for_event": lambda entry: "outcome" in entry,
    "wait_for_condition": lambda entry: "status" in entry,
    "parallel": lambda entry: len(entry["done"]) == entry["branches"],
    "map": lambda entry: len(entry["done"]) == entry["branches"],
    "ask": lambda entry: "outcome" in entry,
    "call": lambda entry: "outcome" in entry,
    "patch": lambda entry: True,
}
"""operation kind → whether what it recorded is final (it will never change again); an
operation of a kind not listed is never sealed: it stays in the run's row, correct but
rewritten at each checkpoint."""


BRANCHING = frozenset({"parallel", "map"})
"""The operation kinds whose finished branches are journaled one by one."""


def is_finished(kind: str, entry: Mapping[str, Any] | None) -> bool:
    """Whether an operation of ``kind`` that recorded ``entry`` (None: nothing yet) is over:
    what it recorded will never change again."""
    finished = _FINISHED.get(kind)
    return entry is not None and finished is not None and finished(entry)


class OpsJournal(RunJournal):
    """A Python flow's operations, each one an entry once it finished, and the finished
    branches of its ``parallel`` and ``map`` operations."""

    def __init__(self) -> None:
        self._sealed: dict[str, int] = {}
        """How many operations of each scope (by prefix) are in the journal."""
        self._branches: dict[str, int] = {}
        """op path → how many of a branching operation's results (the first ones of its
        ``done``, in insertion order) are in the journal."""

    def query(self, state: Mapping[str, Any]) -> JournalQuery | None:
        return None if "journal" not in state else JournalQuery((OPS, BRANCHES))

    def restore(self, state: dict[str, Any], entries: Sequence[JournalEntry]) -> None:
        document = state["journal"]
        ops: dict[str, Any] = {}
        order: dict[str, list[list[str]]] = {}
        results: dict[str, dict[str, Any]] = {}
        for entry in entries:
            if entry.scope == BRANCHES:
                path, _, index = entry.key.rpartition("[")
                results.setdefault(path, {})[index.removesuffix("]")] = entry.value
                continue
            prefix, kind = entry.value["in"], entry.value["kind"]
            ops[entry.key] = entry.value["entry"]
            order.setdefault(prefix, []).append([kind, entry.key[len(prefix):]])
        self._sealed = {prefix: len(listed) for prefix, listed in order.items()}
        for prefix, live in document["order"].items():
            order.setdefault(prefix, []).extend(live)
        ops.update(document["ops"])
        for path, done in results.items():  # the journaled ones first, as split counts them
            ops[path]["done"] = {**done, **ops[path]["done"]}
            self._branches[path] = len(done)
        document.update(ops=ops, order=order)

    def split(self, state: dict[str, Any]) -> tuple[EncodedJSON, tuple[JournalEntry, ...]]:
        document = state.get("journal")
        if document is None:
            return _encoded(state), ()
        ops = document["ops"]
        fresh: list[JournalEntry] = []
        live_ops: dict[str, Any] = {}
        live_order: dict[str, list[list[str]]] = {}
        for prefix, listed in document["order"].items():
            sealed = self._sealed.get(prefix, 0)
            for kind, name in listed[sealed:]:
                if kind in BRANCHING and prefix + name in ops:
                    fresh.extend(self._finished_branches(prefix + name, ops[prefix + name]))
            while sealed < len(listed) and _finished(ops, prefix, listed[sealed]):
                kind, name = listed[sealed]
                fresh.append(JournalEntry(OPS, prefix + name, _encoded(
                    {"in": prefix, "kind": kind, "entry": _recorded(kind, ops[prefix + name])})))
                sealed += 1
            self._sealed[prefix] = sealed
            if sealed < len(listed):
                live_order[prefix] = listed[sealed:]
                live_ops.update((prefix + name, _recorded(kind, ops[prefix + name]))
                                for kind, name in listed[sealed:] if prefix + name in ops)
        live = {**state, "journal": {"ops": live_ops, "order": live_order}}
        return _encoded(live), tuple(fresh)

    def _finished_branches(self, path: str, entry: Mapping[str, Any]) -> list[JournalEntry]:
        """The results of the operation at ``path`` finished since the last split."""
        done: dict[str, Any] = entry["done"]
        added = list(islice(reversed(done.items()), len(done) - self._branches.get(path, 0)))
        self._branches[path] = len(done)
        return [JournalEntry(BRANCHES, f"{path}[{index}]", _encoded(result))
                for index, result in reversed(added)]


def _recorded(kind: str, entry: dict[str, Any]) -> dict[str, Any]:
    """What the row or an ``op`` entry keeps of an operation: a branching one's results are
    each an entry of their own."""
    return {**entry, "done": {}} if kind in BRANCHING else entry


def _finished(ops: Mapping[str, Any], prefix: str, listed: Sequence[str]) -> bool:
    kind, name = listed
    return is_finished(kind, ops.get(prefix + name))


def bindings_with(state: Mapping[str, Any], entries: Iterable[JournalEntry]) -> dict[str, Any]:
    """The top-level bindings of a run: those in its state and those in its journal."""
    root = state.get("root")
    bindings = {entry.key: entry.value for entry in entries if entry.scope == BINDINGS}
    return {**bindings, **(root["b"] if root else {})}


def whole_state(state: dict[str, Any], entries: Sequence[JournalEntry]) -> dict[str, Any]:
    """The whole state of a run — what a worker advancing it holds in memory once every
    entry is read back — from its live state and all its journal entries (changed in
    place)."""
    if "journal" in state:
        OpsJournal().restore(state, [entry for entry in entries
                                     if entry.scope in (OPS, BRANCHES)])
    if "root" in state:
        state["root"]["b"] = bindings_with(state, entries)
        _restore_loops(state["root"], entries)
    return state


def _restore_loops(root: dict[str, Any], entries: Sequence[JournalEntry]) -> None:
    """Put every loop's journaled items and finished iterations back in its state."""
    by_scope: dict[str, dict[str, Any]] = {}
    for entry in entries:
        by_scope.setdefault(entry.scope, {})[entry.key] = entry.value
    for cur in live_steps(root):
        if "each" in cur:
            cur.setdefault("items", by_scope.get(ITEMS, {}).get(cur["each"]))
        if name := _loop_name(cur):
            cur["done"] = {**by_scope.get(DONE + name, {}), **cur["done"]}
