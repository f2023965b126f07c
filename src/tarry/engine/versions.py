"""The version of a run's persisted state, and the upgrade from each older one.

A run may wait for weeks across releases, so its state says which shape it has
(``state["version"]``; a state without one is version 0, as every tarry before the journal
wrote it, and as a new run's state reads until its first claim). A worker upgrades the
state of each run it claims before advancing it, one version at a time through
:data:`UPGRADES`; a state newer than this code is refused with
:class:`~tarry.errors.StateVersionError` naming both versions and left untouched, for a
newer worker to resume. ``tests/state/`` holds stored states of each release, waiting in
every kind of wait; CI loads them into a store and resumes them, so a change that would
reinterpret a waiting run fails before it ships.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tarry.engine.frames import live_steps
from tarry.errors import StateVersionError

__all__ = ["STATE_VERSION", "UPGRADES", "upgrade"]

STATE_VERSION = 3
"""The shape this tarry writes."""


def _from_0(state: dict[str, Any]) -> dict[str, Any]:
    """Version 0 kept every completed binding (YAML) and every recorded operation (Python)
    inline, and its waits no ``since``. Version 1 reads such a state as it is: its first
    checkpoint appends what completed to the journal and keeps the live path in the row; a
    wait without ``since`` is explained as waiting since the run's last update."""
    return state


def _from_1(state: dict[str, Any]) -> dict[str, Any]:
    """Version 1 kept a ``for_each``'s items and finished iterations inline in its state.
    Version 2 journals them (see :mod:`tarry.engine.journal`), under a name the for_each's
    state carries (``each``): a version-1 for_each gets a name of its own (``#1``, ``#2``, …,
    never a step's path), and its first checkpoint moves its items and finished iterations to
    the journal. Version 2 also notes at each release whether the run has event waits and
    open tasks (``registered``); a state without the note is taken to have both."""
    root = state.get("root")
    if root is not None:
        legacy = (cur for cur in live_steps(root) if "items" in cur and "live" in cur)
        for number, cur in enumerate(legacy, start=1):
            cur.setdefault("each", f"#{number}")
    return state


def _from_2(state: dict[str, Any]) -> dict[str, Any]:
    """Version 2 kept a ``repeat``'s finished iterations inline, as a list, and the results
    of a Python flow's ``parallel`` or ``map`` in its record. Version 3 journals both (see
    :mod:`tarry.engine.journal`): a repeat's state carries the name it journals under
    (``repeat``) and its finished iterations by index, and a branching operation's record
    keeps its ``done`` empty. A version-2 repeat gets a name of its own (``#r1``, ``#r2``, …,
    never a step's path) and its iterations by index; a version-2 branching record is read as
    it is. The first checkpoint of either moves what finished to the journal."""
    root = state.get("root")
    if root is not None:
        legacy = (cur for cur in live_steps(root) if isinstance(cur.get("done"), list))
        for number, cur in enumerate(legacy, start=1):
            cur.update(repeat=f"#r{number}",
                       done={str(index): binding for index, binding in enumerate(cur["done"])})
    return state


UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    0: _from_0, 1: _from_1, 2: _from_2}
"""version n → the function that turns a version-n state into a version n+1 one."""


def upgrade(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` (freshly decoded: changed in place) in the current shape, stamped with
    :data:`STATE_VERSION`; ``StateVersionError`` when it is newer than this code."""
    version = state.get("version", 0)
    if not isinstance(version, int) or version > STATE_VERSION:
        raise StateVersionError(version, STATE_VERSION)
    while version < STATE_VERSION:
        state = UPGRADES[version](state)
        version += 1
    state["version"] = STATE_VERSION
    return state
