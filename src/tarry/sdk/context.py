"""The :class:`Context` a Python flow receives: its durable operations, one line each.

Every method delegates to the run's :class:`~tarry.sdk.operations.FlowRun`, which records
what the operation did in the run's journal; user code never touches the engine. The
context of the flow (or branch) being executed is also reachable through
:meth:`Context.current`, for functions that are not handed one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, NoReturn, ParamSpec, TypeVar, cast, overload

from tarry.clock import from_iso
from tarry.sdk import asks, branches, calls, conditions, patches
from tarry.sdk.conditions import CheckContext
from tarry.sdk.operations import FlowRun
from tarry.sdk.replay import Scope
from tarry.sdk.strategies import WaitStrategy

__all__ = ["ChildResult", "Context", "EventResult", "TaskResult", "enter", "leave"]

T = TypeVar("T")
P = ParamSpec("P")
S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the item type of ctx.map

_CURRENT: ContextVar[Context] = ContextVar("tarry_context")


@dataclass(frozen=True)
class EventResult:
    """What ``ctx.wait_for_event`` came to, like the YAML ``wait_for`` binding: ``status``
    is ``"received"`` (``event`` is the payload, ``received_at`` when it arrived) or
    ``"timeout"`` (both ``None``). A timeout is a value, not an exception."""

    status: Literal["received", "timeout"]
    event: dict[str, Any] | None
    received_at: datetime | None

    @classmethod
    def of(cls, outcome: Mapping[str, Any]) -> EventResult:
        """The result recorded as ``outcome`` (``{status, event, received_at}``)."""
        received_at = outcome.get("received_at")
        return cls(outcome["status"], outcome["event"],
                   from_iso(received_at) if received_at else None)


@dataclass(frozen=True)
class TaskResult:
    """What ``ctx.ask`` came to, like the YAML ``ask`` binding: ``status`` is
    ``"completed"`` (``outcome`` the decision, ``data`` the form's answer, ``by`` the
    principal, ``completed_at`` when) or ``"timeout"`` (all four ``None``). A timeout is a
    value, not an exception."""

    status: Literal["completed", "timeout"]
    outcome: str | None
    data: dict[str, Any] | None
    by: str | None
    completed_at: datetime | None

    @classmethod
    def of(cls, outcome: Mapping[str, Any]) -> TaskResult:
        """The result recorded as ``outcome`` (``{status, outcome, data, by,
        completed_at}``)."""
        completed_at = outcome.get("completed_at")
        return cls(outcome["status"], outcome["outcome"], outcome["data"], outcome["by"],
                   from_iso(completed_at) if completed_at else None)


@dataclass(frozen=True)
class ChildResult:
    """What ``ctx.call`` came to, like the YAML ``call`` binding: ``status`` is
    ``"succeeded"`` (``exit`` the child's exit, ``result`` a Python child's return value) or
    ``"timeout"`` (the child was cancelled; ``exit`` and ``result`` are ``None``); ``run`` is
    the child run's id. A child that did not succeed raises
    :class:`~tarry.errors.ChildFailedError` instead."""

    status: Literal["succeeded", "timeout"]
    exit: str | None
    result: Any
    run: str

    @classmethod
    def of(cls, outcome: Mapping[str, Any]) -> ChildResult:
        """The result recorded as ``outcome`` (``{status, exit, result, error, run}``)."""
        return cls(outcome["status"], outcome["exit"], outcome["result"], outcome["run"])


class Context:
    """The durable operations of a flow (or of one branch of it).

    Each operation is named (or, with ``None``, known by its place in the flow); a resumed
    run re-executes the flow from the top and each operation the run already recorded
    returns what it recorded, so code between operations must make the same calls each
    time. Operations of one context are awaited one at a time; run them
    concurrently with :meth:`parallel` or :meth:`map`.
    """

    def __init__(self, run: FlowRun, scope: Scope) -> None:
        self._run = run
        self._scope = scope

    @staticmethod
    def current() -> Context:
        """The context of the flow or branch being executed; RuntimeError outside one."""
        try:
            return _CURRENT.get()
        except LookupError:
            raise RuntimeError("no tarry flow is being executed here") from None

    @property
    def run_id(self) -> str:
        """The run's id: the same on every replay (a base for idempotency keys)."""
        return self._run.env.run_id

    @overload
    async def step(self, name: str | None, fn: Callable[P, Awaitable[T]], /,
                   *args: P.args, **kwargs: P.kwargs) -> T: ...

    @overload
    async def step(self, name: str | None, fn: Callable[P, T], /,
                   *args: P.args, **kwargs: P.kwargs) -> T: ...

    async def step(self, name: str | None, fn: Callable[..., Any], /, *args: Any,
                   **kwargs: Any) -> Any:
        """Call ``fn(*args, **kwargs)`` once for the run (``async`` on the loop, plain in a
        thread) and record its result; a replay returns the recorded result. A step that
        raises is recorded too: :class:`~tarry.errors.StepError` then and on every replay.
        Steps are at-least-once across crashes (make their effects idempotent), exactly-once
        once recorded."""
        return await self._run.step(self._scope, name, fn, args, kwargs)

    async def wait(self, name: str | None, duration: timedelta | str | None = None, /, *,
                   until: datetime | None = None) -> None:
        """Suspend for ``duration`` (``"2d"``, a timedelta) or until the aware instant
        ``until``; nothing is held meanwhile. An instant already past resumes at once."""
        await self._run.wait(self._scope, name, duration, until)

    async def wait_for_event(self, name: str | None, event_type: str, /, *,
                             match: Mapping[str, Any],
                             timeout: timedelta | str | datetime) -> EventResult:
        """Suspend until an event of ``event_type`` whose correlation values equal ``match``
        (every ``correlate_on`` key of its manifest) arrives, or until ``timeout`` (a
        duration from now or an aware instant). An event sent before the wait began is
        taken from the buffer."""
        return EventResult.of(await self._run.wait_for_event(self._scope, name, event_type,
                                                             match, timeout))

    async def ask(self, name: str | None, /, *, title: str, outcomes: Sequence[str],
                  timeout: timedelta | str | datetime, details: str | None = None,
                  assign: Sequence[str] | None = None,
                  form: Mapping[str, Any] | None = None) -> TaskResult:
        """Ask a person: open a task titled ``title`` with one button per outcome
        in ``outcomes``, optionally ``details``, the principals who may complete it
        (``assign``; default anyone) and a JSON Schema ``form`` of what they fill in; suspend
        until it is completed or ``timeout`` (a duration from now or an aware instant)
        passes."""
        return TaskResult.of(await asks.ask(self._run, self._scope, name, title=title,
                                            outcomes=outcomes, timeout=timeout,
                                            details=details, assign=assign, form=form))

    async def call(self, flow: str, /, *, target: str | None = None,
                   timeout: timedelta | str | datetime | None = None,
                   **inputs: Any) -> ChildResult:
        """Start a child run of ``flow`` (a flow of the project, YAML or Python) with
        ``inputs`` and ``target``, and suspend until it ends, or until ``timeout`` (a
        duration from now or an aware instant; default none) passes: then the child is
        cancelled and the result's status is ``"timeout"``. The child is created with the
        run's checkpoint, once. A child that fails, is cancelled or is refused raises
        :class:`~tarry.errors.ChildFailedError`."""
        return ChildResult.of(await calls.call(self._run, self._scope, flow, inputs,
                                               target=target, timeout=timeout))

    async def wait_for_condition(
            self, name: str | None, /, *,
            check: Callable[[S, CheckContext], Awaitable[S]] | Callable[[S, CheckContext], S],
            initial_state: S, strategy: WaitStrategy[S] | None = None) -> S:
        """Call ``check(state, check_ctx)`` until ``strategy`` (default:
        ``WaitStrategy.exponential()``, done when the state is ``True``; without an
        ``is_done`` a state that is not a boolean fails the operation) stops; the run is
        suspended between checks. Returns the last state; raises
        :class:`~tarry.errors.WaitForConditionError` when the strategy gives up."""
        return cast(S, await conditions.wait_for_condition(
            self._run, self._scope, name, check=check, initial_state=initial_state,
            strategy=strategy or WaitStrategy.exponential()))

    def patched(self, patch_id: str, /) -> bool:
        """Whether this run takes the code of the patch ``patch_id``: True for a run that
        reaches this point on code that has the patch (a marker is recorded in its journal,
        so its replays agree), False for a run that went past this point before the patch
        existed. Every call with the same id in a run gives the same answer.

        ``if ctx.patched("new-tax"): <new code> else: <old code>`` changes a flow while runs
        wait in it; see "Changing a flow while runs wait" in the Python guide."""
        return patches.patched(self._scope, patch_id)

    def deprecate_patch(self, patch_id: str, /) -> None:
        """Say that every run now takes the code of patch ``patch_id``: the call that
        replaces ``if ctx.patched(...)`` once no run recorded before the patch remains. It
        accepts the marker a patched run recorded here and records nothing."""
        patches.deprecate_patch(self._scope, patch_id)

    def continue_as_new(self, **inputs: Any) -> NoReturn:
        """End the run and start its successor: a new run of the same flow and target with
        ``inputs`` (checked as a start checks them), created in the transaction that ends this
        one (``succeeded``, exit ``continued``) and linked both ways (``continued_as``,
        ``continued_from``). The successor's journal starts empty, so a flow that loops for
        months stays cheap to resume. Events delivered to this run and not taken in, and
        those buffered for its waits, are the successor's to take.

        Never returns: it unwinds the flow function (``return ctx.continue_as_new(...)``
        reads well). Raises :class:`~tarry.errors.ContinueAsNewError` for inputs the flow
        does not take, and inside a ``parallel`` / ``map`` branch."""
        self._run.continue_as_new(self._scope, inputs)

    def now(self, name: str | None = None) -> datetime:
        """The current instant, recorded: a replay returns the same instant."""
        return self._run.now(self._scope, name)

    def random(self, name: str | None = None) -> float:
        """A random float in [0, 1), recorded: a replay returns the same number."""
        return self._run.random(self._scope, name)

    async def parallel(self, *branches: Callable[[Context], Awaitable[T]],
                       name: str | None = None) -> list[T]:
        """Run ``branches`` (each ``async def branch(ctx)``) concurrently, each with a context
        of its own that may suspend independently; their results, in order."""
        return await self._branches("parallel", name, [_bound(branch, self._run)
                                                       for branch in branches])

    async def map(self, fn: Callable[[Context, I], Awaitable[T]], items: Iterable[I], /, *,
                  name: str | None = None) -> list[T]:
        """``parallel`` over ``items``: one branch ``fn(ctx, item)`` per item."""
        return await self._branches("map", name, [_bound(_with_item(fn, item), self._run)
                                                  for item in items])

    async def _branches(self, kind: str, name: str | None,
                        bodies: list[branches.Branch]) -> list[T]:
        return cast(list[T], await branches.run_branches(self._run, self._scope, kind, name,
                                                         bodies))


def enter(context: Context) -> Token[Context]:
    """Make ``context`` the current one (in the asyncio task executing it); the token
    restores the previous one."""
    return _CURRENT.set(context)


def leave(token: Token[Context]) -> None:
    """Restore the context current before :func:`enter` gave ``token``."""
    _CURRENT.reset(token)


def _bound(branch: Callable[[Context], Awaitable[Any]], run: FlowRun) -> branches.Branch:
    async def body(scope: Scope) -> Any:
        context = Context(run, scope)
        enter(context)
        return await branch(context)
    return body


def _with_item(fn: Callable[[Context, I], Awaitable[T]],
               item: I) -> Callable[[Context], Awaitable[T]]:
    def branch(context: Context) -> Awaitable[T]:
        return fn(context, item)
    return branch
