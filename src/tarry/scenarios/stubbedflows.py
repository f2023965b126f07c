"""A scenario's stubbed flows: programs standing in for called flows, so that a ``call``
of one starts a child run that ends at once with the scripted outcome (``stub_flows``).

The stand-in takes the inputs the real flow declares (found in the project, when it
exists), so a call is checked as it would be; its run ends ``succeeded`` (with the ``exit``,
or with ``result`` as a Python flow's return value) or ``failed`` (``error.type
stubbed``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tarry.config import Settings
from tarry.engine.catalog import Program, program_descriptor
from tarry.engine.outcome import Done, Exited, Failed, Outcome
from tarry.engine.runtime import find_flow
from tarry.errors import TarryError
from tarry.language.model import Flow, InputSpec, Scope
from tarry.scenarios.model import FlowStub

if TYPE_CHECKING:
    from tarry.engine.interpreter import Env

__all__ = ["StubbedFlow", "stubbed_flows"]


class StubbedFlow:
    """A program that ends every run of it as ``stub`` says."""

    def __init__(self, stub: FlowStub, inputs: Mapping[str, InputSpec]) -> None:
        self.stub = stub
        source = program_descriptor(stub.flow)
        self.definition = Flow(name=stub.flow, body=Scope(()), source=source,
                               digest=hashlib.sha256(source.encode()).hexdigest(),
                               path=f"<stubbed flow {stub.flow}>", inputs=dict(inputs))

    async def advance(self, env: Env, state: dict[str, Any]) -> Outcome:
        """The scripted outcome, at once."""
        stub = self.stub
        if stub.status == "failed":
            return Failed({"type": "stubbed", "message": stub.message or "", "step": None})
        if stub.exit is not None:
            return Exited(stub.exit)
        return Done(stub.result)

    async def replay(self, env: Env, state: dict[str, Any]) -> Outcome:
        """What a run of it came to: it records nothing, so the same outcome."""
        return await self.advance(env, state)


def stubbed_flows(stubs: tuple[FlowStub, ...], project: Settings) -> dict[str, Program]:
    """The stand-ins of ``stubs``, each with the inputs its real flow declares (none when
    the project has no such flow)."""
    return {stub.flow: StubbedFlow(stub, _inputs_of(project, stub.flow)) for stub in stubs}


def _inputs_of(project: Settings, name: str) -> Mapping[str, InputSpec]:
    try:
        return find_flow(project, name).inputs
    except TarryError:
        return {}
