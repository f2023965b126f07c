"""Actions: the named callables a flow's action steps invoke.

An action is ``action(args, ctx)`` returning a dict (the step's binding) or ``None``, sync or
``async``. User actions are registered in ``[actions]`` of ``tarry.toml``
(``name = "module:function"``) or through the ``tarry.actions`` entry-point group.

Actions are at-least-once: a worker that dies mid-action re-runs the step on recovery, so
``ctx.idempotency_key`` is stable across retries and re-runs of the same step of the same run,
and ``ctx.attempt`` counts every execution (those of a ``retry`` and the re-runs after a
worker died alike). A call is bounded by its step's ``timeout``; a long one calls
``ctx.heartbeat()`` (see :mod:`tarry.engine.timeouts`). A sync action runs in a thread of its
own (:func:`in_thread`): one that hangs past its timeout is abandoned there, and what it does
afterwards reaches nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import importlib
import inspect
import logging
import queue
import sys
import threading
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, TypeAlias

from tarry._suggest import did_you_mean
from tarry.errors import ActionError, ConfigError

__all__ = [
    "ActionContext",
    "ActionFunction",
    "ActionRegistry",
    "StepFailure",
    "idempotency_key",
    "in_thread",
]

ActionResult: TypeAlias = Mapping[str, Any] | None
ActionFunction: TypeAlias = Callable[
    [dict[str, Any], "ActionContext"], ActionResult | Awaitable[ActionResult]
]

logger = logging.getLogger("tarry.actions")


class StepFailure(Exception):
    """Raised by an action to fail its step with a chosen error ``type`` and message."""

    def __init__(self, message: str, *, type: str = "failed") -> None:
        super().__init__(message)
        self.type = type


@dataclass(frozen=True)
class ActionContext:
    """What an action learns about the call besides its arguments."""

    run_id: str
    step_path: str
    attempt: int
    idempotency_key: str
    now: datetime
    logger: logging.Logger = field(default=logger, repr=False)
    note: Callable[[str], None] = field(default=lambda _message: None, repr=False)
    """Writes a line into the run's history (used by the ``log`` action)."""
    timeout: timedelta | None = None
    """How long this call may run (the step's ``timeout``, else ``[limits]
    action_timeout``); an action with a timeout of its own keeps it below this one."""
    beat: Callable[[Any], None] = field(default=lambda _details: None, repr=False)
    """Where :meth:`heartbeat` reports to (the engine's watch over the call)."""

    def heartbeat(self, details: Any = None) -> None:
        """Tell the engine the action is alive and making progress. Cheap (no write:
        the worker renews its leases on its own schedule) and callable from any thread.
        Once an action has called it, a silence longer than the worker's lease ends the
        call with ``timeout``; ``details`` (the last ones given) are named in that error."""
        self.beat(details)


def idempotency_key(run_id: str, step_path: str) -> str:
    """A key stable for one step of one run, whatever the attempt."""
    return hashlib.sha256(f"{run_id}\x00{step_path}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class _Entry:
    function: ActionFunction
    pure: bool


def _declared_schema(function: ActionFunction) -> Mapping[str, Any] | None:
    schema = getattr(function, "arguments", None)
    return schema if isinstance(schema, Mapping) else None


class ActionRegistry:
    """The actions a flow may call, by name.

    ``pure`` actions have no effect outside the run (``set``, ``log``, ``fail``): the engine
    need not checkpoint after them. Every other action is followed by a checkpoint so that a
    crash re-runs at most the action that was in flight.
    """

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._unprovided: set[str] = set()

    def register(self, name: str, function: ActionFunction, *, pure: bool = False) -> None:
        """Add (or replace) the action ``name``."""
        self._entries[name] = _Entry(function, pure)
        self._unprovided.discard(name)

    def unprovided(self) -> frozenset[str]:
        """The actions provided elsewhere that nothing here provides (see
        :meth:`try_load_user_actions`): calling one fails its step."""
        return frozenset(self._unprovided)

    def names(self) -> frozenset[str]:
        """Every registered action name."""
        return frozenset(self._entries)

    def declared_arguments(self) -> dict[str, Mapping[str, Any] | None]:
        """Every registered action name with the JSON Schema its function declares for its
        arguments (its ``arguments`` attribute, a mapping), or None; the loader checks a
        step's literal arguments against it, as it does for the built-in actions."""
        return {name: _declared_schema(entry.function) for name, entry in self._entries.items()}

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def is_pure(self, name: str) -> bool:
        """Whether ``name`` has no effect outside the run."""
        return self._lookup(name).pure

    async def call(self, name: str, args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        """Invoke ``name``; a sync user function runs in a thread, off the event loop."""
        entry = self._lookup(name)
        function = entry.function
        if inspect.iscoroutinefunction(function):
            result = await function(args, ctx)
        elif entry.pure:  # built-in bookkeeping: cheaper inline than a thread hop
            result = function(args, ctx)
        else:
            result = await in_thread(function, args, ctx)
            if inspect.isawaitable(result):
                result = await result
        if result is None:
            return {}
        if not isinstance(result, Mapping):
            raise ActionError(f"action '{name}' returned {type(result).__name__}; an action "
                              "must return a dict or None")
        return dict(result)

    def load_user_actions(self, spec: Mapping[str, str], *, root: Path | None = None,
                          provided: Collection[str] = (),
                          entry_point_group: str = "tarry.actions") -> None:
        """Register ``name = "module:function"`` pairs, the entry points of the group, and
        the actions ``provided`` elsewhere (see :meth:`try_load_user_actions`).

        Raises :class:`~tarry.errors.ConfigError` naming every pair that cannot be imported.
        """
        problems = self.try_load_user_actions(spec, root=root, provided=provided,
                                              entry_point_group=entry_point_group)
        if problems:
            raise ConfigError(*(message for _name, message in problems))

    def try_load_user_actions(self, spec: Mapping[str, str], *, root: Path | None = None,
                              provided: Collection[str] = (),
                              entry_point_group: str = "tarry.actions") -> list[tuple[str, str]]:
        """Register what :meth:`load_user_actions` does; each pair that cannot be imported is
        returned as ``(name, why)`` and stands in the registry as an action that fails when
        called, so that flows naming it still load (``tarry validate`` checks them all).

        ``root`` (the project root) is put first on the import path, so that an action's
        module may live in the project itself, as it would for ``python -m`` run there.
        A ``provided`` name that nothing here registers is an action that fails when called,
        saying where it was expected: it exists where the project runs, and a test stubs it.
        """
        if root is not None and str(root) not in sys.path:
            sys.path.insert(0, str(root))
        for ep in entry_points(group=entry_point_group):
            self.register(ep.name, ep.load())
        problems: list[tuple[str, str]] = []
        for name, target in spec.items():
            try:
                self.register(name, _import_target(name, target))
            except ConfigError as exc:
                problems.append((name, str(exc)))
                self.register_unavailable(name, str(exc))
        for name in sorted(set(provided) - self._entries.keys()):
            self.register_unavailable(name, (
                f"action '{name}' is provided elsewhere (provided_actions in tarry.toml) and "
                "nothing provides it here: run the flow where it is provided (an installed "
                "package's 'tarry.actions' entry point, or [actions]), or stub it in a test"))
            self._unprovided.add(name)
        return problems

    def register_unavailable(self, name: str, why: str) -> None:
        """Add the action ``name`` that fails its step saying ``why`` it is not there: flows
        calling it load, as for an action whose module is missing here."""
        self.register(name, _unavailable(why))

    def _lookup(self, name: str) -> _Entry:
        try:
            return self._entries[name]
        except KeyError:
            raise ActionError(f"unknown action '{name}'{did_you_mean(name, self._entries)}"
                              ) from None


def in_thread(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Awaitable[Any]:
    """``function(*args, **kwargs)`` on a daemon thread of :data:`_THREADS` (with the
    caller's context variables), awaited on the running loop.

    Not the loop's default pool: a call that never returns (an action past its timeout,
    abandoned) would keep its pool thread for ever, and a pool of a handful would soon run
    nothing else. Here a call that finds no idle thread starts one, and a daemon thread
    never keeps the process from exiting. Cancelling the awaitable abandons the call: its
    result, or exception, goes nowhere."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def run() -> None:
        try:
            result = context.run(function, *args, **kwargs)
        except BaseException as exc:  # of any kind: the awaiting caller's to judge
            _settle_soon(loop, future, None, exc)
        else:
            _settle_soon(loop, future, result, None)

    _THREADS.submit(run)
    return future


class _Threads:
    """Daemon threads for sync calls, reused: a call is handed to an idle thread, or to a
    new one when none is idle, so a thread whose call never returns is never waited for.
    A thread idle for :attr:`idle_seconds` ends."""

    def __init__(self, idle_seconds: float = 60.0) -> None:
        self.idle_seconds = idle_seconds
        self._calls: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._free = 0
        """Idle threads no queued call is promised to."""

    def submit(self, call: Callable[[], None]) -> None:
        """Run ``call`` on a thread of the pool."""
        with self._lock:
            if self._free:  # promised to an idle thread, which takes it from the queue
                self._free -= 1
                self._calls.put(call)
                return
        threading.Thread(target=self._work, args=(call,), name="tarry-call",
                         daemon=True).start()

    def _work(self, call: Callable[[], None]) -> None:
        while True:
            call()
            with self._lock:
                self._free += 1
            try:
                call = self._calls.get(timeout=self.idle_seconds)
            except queue.Empty:
                with self._lock:
                    if self._free:  # nothing was promised to this thread: it ends
                        self._free -= 1
                        return
                call = self._calls.get()  # a call was promised to it just now


_THREADS = _Threads()


def _settle_soon(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], result: Any,
                 error: BaseException | None) -> None:
    """Settle ``future`` on its loop, unless it was abandoned or the loop is gone."""
    def settle() -> None:
        if future.done():  # abandoned (cancelled) meanwhile
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
    with contextlib.suppress(RuntimeError):  # the loop closed while it ran: nobody waits
        loop.call_soon_threadsafe(settle)


def _unavailable(why: str) -> ActionFunction:
    """An action that fails its step, saying ``why`` it is not there."""
    def unavailable(_args: dict[str, Any], _ctx: ActionContext) -> ActionResult:
        raise ActionError(why)
    return unavailable


def _import_target(name: str, target: str) -> ActionFunction:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"[actions] {name} = {target!r}: expected \"module:function\"")
    try:
        module = importlib.import_module(module_name)
        function = getattr(module, attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"[actions] {name} = {target!r}: cannot import it ({exc})") from exc
    if not callable(function):
        raise ConfigError(f"[actions] {name} = {target!r} is not callable")
    return function  # type: ignore[no-any-return]
