"""The :class:`App`: where Python flows are registered, started and signalled.

An App is an ordinary object — no global registry — so two can live in one process and
tests do not leak flows into each other::

    app = App()

    @app.flow("settle-order")
    async def settle_order(ctx: Context, order_id: str) -> str: ...

    app.start("settle-order", order_id="A1")

The engine behind it is built on first use from the project configuration (``tarry.toml``
and ``TARRY_*``; the store defaults to SQLite in ``./.tarry/``). Workers find the app
through ``[tarry] app = "module:attribute"``, so ``tarry run``, ``tarry start`` and ``tarry
worker`` run its flows like YAML flows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from tarry.config import Settings, load_settings
from tarry.engine.catalog import Program
from tarry.engine.outcome import Outcome
from tarry.engine.runtime import Engine
from tarry.errors import LoadError, Problem
from tarry.language.manifests import Manifest
from tarry.language.model import Flow
from tarry.model import EventRecord
from tarry.sdk.flows import FlowFunction, PythonFlow, python_flow
from tarry.sdk.runner import advance_flow
from tarry.sdk.serializers import Codec, JsonSerializer, Serializer
from tarry.sdk.static import flow_problems

if TYPE_CHECKING:
    from tarry.engine.interpreter import Env
    from tarry.engine.worker import Worker

__all__ = ["App"]

F = TypeVar("F", bound=FlowFunction)


class App:
    """Python flows and the engine that runs them.

    ``settings`` replaces the project configuration found from the working directory;
    ``serializer`` stores values that are not JSON data (see :mod:`tarry.sdk.serializers`).
    """

    def __init__(self, *, settings: Settings | None = None,
                 serializer: Serializer | None = None) -> None:
        self._settings = settings
        self._codec = Codec(serializer or JsonSerializer())
        self._flows: dict[str, PythonFlow] = {}
        self._engine: Engine | None = None

    def flow(self, name: str) -> Callable[[F], F]:
        """Register ``async def f(ctx, **inputs)`` as the flow ``name``; ``f`` is returned
        unchanged."""
        def register(function: F) -> F:
            flow = python_flow(name, function)
            if name in self._flows:
                raise ValueError(f"flow '{name}' is already registered on this app (by "
                                 f"{self._flows[name].definition.path})")
            self._flows[name] = flow
            return function
        return register

    def programs(self, manifests: Mapping[str, Manifest]) -> Mapping[str, Program]:
        """The app's flows as the engine runs them, their event waits checked against
        ``manifests`` (the engine calls this; it follows later registrations).

        Raises ``LoadError`` with every problem :meth:`problems` finds, as a YAML flow with
        such mistakes is refused at load.
        """
        problems = self.problems(manifests)
        if problems:
            raise LoadError(problems)
        return _Programs(self._flows, self._codec, manifests)

    def problems(self, manifests: Mapping[str, Manifest] | None) -> list[Problem]:
        """What reading the flows' source finds wrong before any run (see
        :mod:`tarry.sdk.static`): undeclared literal event types (checked only when
        ``manifests`` is given), malformed literal durations, operation names used twice."""
        return [problem for flow in self._flows.values()
                for problem in flow_problems(flow.name, flow.function, manifests)]

    @property
    def engine(self) -> Engine:
        """The engine of the project's configuration with this app's flows (built once)."""
        if self._engine is None:
            self._engine = Engine.from_settings(self._settings or load_settings(), app=self)
        return self._engine

    def start(self, flow: str, /, *, target: str | None = None, **inputs: Any) -> str:
        """Create a run of ``flow`` with ``inputs`` (a worker executes it); its id."""
        return self.engine.start(flow, inputs, target=target).id

    def send(self, event_type: str, data: Any, *, id: str | None = None) -> EventRecord:
        """Send an event (validated against the manifests, delivered or buffered)."""
        return self.engine.send(event_type, data, id=id)

    def worker(self, *, concurrency: int = 16) -> Worker:
        """A worker over the app's engine: ``await worker.run(stop_event)`` until stopped, or
        ``await worker.run_once()`` for what is due now (``tarry worker`` does the first)."""
        return self.engine.worker(concurrency=concurrency)

    def close(self) -> None:
        """Release the engine's store, if the engine was built."""
        if self._engine is not None:
            self._engine.close()
            self._engine = None


class _Program:
    """One flow bound to its app's serializer and the engine's manifests."""

    def __init__(self, flow: PythonFlow, codec: Codec, manifests: Mapping[str, Manifest]) -> None:
        self._flow = flow
        self._codec = codec
        self._manifests = manifests

    @property
    def definition(self) -> Flow:
        """The flow as the engine stores it."""
        return self._flow.definition

    async def advance(self, env: Env, state: dict[str, Any]) -> Outcome:
        """One advance of a run of this flow."""
        return await advance_flow(self._flow, env, state, codec=self._codec,
                                  manifests=self._manifests)

    async def replay(self, env: Env, state: dict[str, Any]) -> Outcome:
        """Replay what a run of this flow recorded, executing nothing new."""
        return await advance_flow(self._flow, env, state, codec=self._codec,
                                  manifests=self._manifests, dry=True)


class _Programs(Mapping[str, Program]):
    """A live view of an app's flows as programs."""

    def __init__(self, flows: Mapping[str, PythonFlow], codec: Codec,
                 manifests: Mapping[str, Manifest]) -> None:
        self._flows = flows
        self._codec = codec
        self._manifests = manifests

    def __getitem__(self, name: str) -> Program:
        return _Program(self._flows[name], self._codec, self._manifests)

    def __iter__(self) -> Iterator[str]:
        return iter(self._flows)

    def __len__(self) -> int:
        return len(self._flows)
