"""Test flows on a virtual clock: the real engine and a real store, only time is skipped.

>>> harness = Harness(tmp_path)                       # doctest: +SKIP
>>> run = harness.start(harness.flow(FLOW_YAML))     # doctest: +SKIP
>>> await harness.run_until_idle()                    # a two-day wait takes milliseconds
>>> harness.record(run).status                        # doctest: +SKIP

The harness executes the same interpreter, worker and store code as production; actions can be
replaced by stubs, and the clock moves only when the harness moves it (straight to the next due
instant).
"""

from __future__ import annotations

import os
import random
import tempfile
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeAlias

from tarry.actions import ActionFunction, ActionRegistry
from tarry.clock import Clock, VirtualClock
from tarry.config import Limits, Settings
from tarry.engine.builtins import register_builtins
from tarry.engine.catalog import FlowCatalog, Program, ProgramSource, import_program_source
from tarry.engine.replaying import ReplayReport
from tarry.engine.runtime import Engine
from tarry.errors import TaskNotFound
from tarry.files import FILE_BYTES
from tarry.holds.checks import Answer, CheckResult, CheckRunner, check_environment, exit_for
from tarry.language.calendars import Calendar
from tarry.language.loader import parse_flow
from tarry.language.manifests import load_manifests, parse_manifests
from tarry.language.model import Flow
from tarry.model import EventRecord, RunRecord, RunStatus, TaskRecord
from tarry.store import open_store

__all__ = ["TESTER", "Harness", "ReplayFailed", "StubbedCheck", "assert_replays"]

_DEFAULT_HORIZON = timedelta(days=400)

TESTER = "tester"
"""The principal the harness completes tasks as, unless told another."""

StubbedCheck: TypeAlias = Callable[[datetime], Answer | str]
"""A stubbed hold check: the answer a check asked at a (virtual) instant gets — ``go``,
``not_yet``, ``never`` or ``unknown`` (an :class:`~tarry.holds.checks.Answer` or its value)."""


class Harness:
    """An engine on a :class:`VirtualClock` over a store in ``directory``.

    ``actions`` replaces or adds actions by name (stubs); ``manifests`` is the text of an
    ``events.yaml`` declaring the event types the flows wait for. ``project`` (a project's
    settings) adds that project's user actions, event manifests and flows folder; the store
    stays the harness's own. With either, flows are checked at load against the declared
    event types (their ``wait_for`` and ``emit`` types and ``match`` keys). ``checks`` and
    ``limits`` declare hold checks and bounds (default: the project's, else none and the
    defaults); the checks are real executables, run as a worker would, except those
    ``check_stubs`` answers (declared by it, replacing a declaration of the same name, and
    run as no process); ``rng`` pins the jitter of their cadence. ``app`` (an App; by default
    the one the project's ``[tarry] app`` names, if any) adds its Python flows.
    ``schedules`` names the only flows whose schedule triggers fire (default: every flow's).
    ``flow_stubs`` replaces flows by name with programs standing in for them (what a
    scenario's ``stub_flows`` starts as the child runs of a ``call``).
    ``calendars`` are the business calendars flows may name (default: the project's).
    """

    def __init__(self, directory: Path, *, start: datetime | None = None,
                 store_url: str | None = None,
                 actions: Mapping[str, ActionFunction] | None = None,
                 manifests: str | None = None, project: Settings | None = None,
                 app: ProgramSource | None = None,
                 checks: Mapping[str, Path] | None = None, limits: Limits | None = None,
                 check_stubs: Mapping[str, StubbedCheck] | None = None,
                 rng: random.Random | None = None,
                 schedules: Collection[str] | None = None,
                 calendars: Mapping[str, Calendar] | None = None,
                 flow_stubs: Mapping[str, Program] | None = None) -> None:
        self.directory = directory
        self.clock = VirtualClock(start)
        registry = ActionRegistry()
        register_builtins(registry)
        if project is not None:
            registry.load_user_actions(project.actions, root=project.root,
                                       provided=project.provided_actions)
        for name, function in (actions or {}).items():
            registry.register(name, function)
        file_bytes = project.limits.file_bytes if project is not None else FILE_BYTES
        declared = load_manifests(project.event_files, file_bytes) if project is not None else {}
        if manifests:
            declared.update(parse_manifests(manifests, "events.yaml"))
        store = open_store(store_url or f"sqlite:///{directory / 'tarry.db'}")
        flows_dir = project.flows_dir if project is not None else directory / "flows"
        self._checked = declared if manifests or project is not None else None
        source = app if app is not None or project is None or project.app is None \
            else import_program_source(project.app, root=project.root)
        if calendars is None and project is not None:
            calendars = project.calendars
        checks = project.checks if checks is None and project is not None else checks
        limits = project.limits if limits is None and project is not None else limits
        catalog = FlowCatalog(flows_dir, store, registry.declared_arguments(), self._checked,
                              programs=source.programs(declared) if source else None,
                              file_bytes=file_bytes, calendars=calendars,
                              pools=None if limits is None else limits.pools, stubs=flow_stubs)
        stubs = dict(check_stubs or {})
        self.engine = Engine(
            store, catalog, registry, self.clock, declared,
            checks={**(checks or {}), **{name: Path(f"stub:{name}") for name in stubs}},
            limits=limits, rng=rng, schedules=schedules,
            check_runner=_StubbedChecks(stubs, self.clock, limits or Limits()) if stubs else None)
        self.worker = self.engine.worker(concurrency=64, name="harness")

    def close(self) -> None:
        """Release the store."""
        self.engine.close()

    def __enter__(self) -> Harness:
        """``with Harness(...) as harness:`` closes it at the end of the block, however the
        block ends."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def flow(self, source: str, path: str = "flow.yaml") -> Flow:
        """Load a flow from YAML text (validated exactly like a file; with manifests given,
        its event types and ``match`` keys are checked against them too)."""
        return parse_flow(source, path, pools=self.engine.limits.pools,
                          actions=self.engine.actions.declared_arguments(),
                          manifests=self._checked, calendars=self.engine.catalog.calendars)

    def start(self, flow: str | Flow, inputs: Mapping[str, Any] | None = None, *,
              target: str | None = None, hold_after: datetime | None = None) -> str:
        """Start a run; return its id. Nothing executes until the clock is moved."""
        return self.engine.start(flow, inputs, target=target, hold_after=hold_after).id

    async def run_due(self) -> int:
        """Execute everything due at the current virtual instant."""
        return await self.worker.run_once()

    async def advance(self, delta: timedelta) -> None:
        """Move time forward by ``delta``, executing every wake-up on the way, at its instant."""
        await self.run_until(self.clock.now() + delta)

    async def run_until(self, instant: datetime) -> None:
        """Execute every wake-up up to ``instant``, each at its own instant; stop there."""
        await self._drain(instant)
        if instant > self.clock.now():
            self.clock.set(instant)
            await self.run_due()

    async def run_until_idle(self, horizon: timedelta = _DEFAULT_HORIZON) -> None:
        """Execute until nothing is due any more (or ``horizon`` of virtual time passed)."""
        await self._drain(self.clock.now() + horizon)

    async def _drain(self, limit: datetime) -> None:
        await self.run_due()
        while (due := self.engine.store.next_due_at()) is not None and due <= limit:
            if due > self.clock.now():
                self.clock.set(due)
            await self.run_due()

    def send(self, event_type: str, data: Any, *, id: str | None = None) -> EventRecord:
        """Send an event now (validated against the manifests given to the harness)."""
        return self.engine.send(event_type, data, id=id)

    def task(self, run_id: str, step: str) -> TaskRecord:
        """The latest task the run's step ``step`` (its path, such as ``review`` or
        ``items[2].review``) opened; raises ``TaskNotFound`` when it opened none."""
        for task in self.engine.store.list_tasks(state=None, limit=100_000):
            if task.run_id == run_id and task.request.step == step:
                return task
        raise TaskNotFound(f"{run_id}/{step}")

    def complete_task(self, run_id: str, step: str, *, outcome: str,
                      data: Mapping[str, Any] | None = None,
                      by: str = TESTER) -> TaskRecord:
        """Complete the task of the run's step ``step`` now, as principal ``by``, exactly as
        ``tarry tasks complete`` does (assignment, outcome and form are checked)."""
        return self.engine.complete_task(self.task(run_id, step).id, outcome=outcome,
                                         data=None if data is None else dict(data), by=by)

    def record(self, run_id: str) -> RunRecord:
        """The run as stored."""
        return self.engine.store.get_run(run_id)

    def document(self, run_id: str) -> dict[str, Any]:
        """The run document, with history."""
        return self.engine.document(run_id)

    def chain(self, run_id: str) -> list[str]:
        """The run and each run it continued as (``ctx.continue_as_new``), in order: the
        last is the one still going, or the one that ended the chain."""
        chain = [run_id]
        while (successor := self.engine.store.continued_as(chain[-1])) is not None:
            chain.append(successor)
        return chain

    def latest(self, run_id: str) -> str:
        """The last run of ``run_id``'s chain of runs continued as new (``run_id`` itself when
        it did not continue)."""
        return self.chain(run_id)[-1]

    def history_kinds(self, run_id: str) -> list[str]:
        """The kinds of the run's history entries, oldest first."""
        return [entry.kind for entry in self.engine.store.history(run_id)]

    async def replay(self, runs: Sequence[str] = (), *, flow: str | None = None,
                     statuses: Sequence[RunStatus] | None = None) -> ReplayReport:
        """Replay the selected runs of the store against the harness's flows with no
        effects (as ``tarry replay`` does): ``runs``, else every run in ``statuses``
        (default: every run that has not ended), of ``flow`` if given."""
        return await self.engine.replay(runs, flow=flow, statuses=statuses)

    async def assert_replays(self, runs: Sequence[str] = (), *, flow: str | None = None,
                             statuses: Sequence[RunStatus] | None = None) -> ReplayReport:
        """:meth:`replay`, raising :class:`ReplayFailed` when any run would hit
        nondeterminism or fail otherwise."""
        report = await self.replay(runs, flow=flow, statuses=statuses)
        if report.problems:
            raise ReplayFailed(report)
        return report


class ReplayFailed(AssertionError):
    """Some runs would fail on their next resume under the current code; ``report`` says
    which and why (the message is its text, one line per run)."""

    def __init__(self, report: ReplayReport) -> None:
        super().__init__("some runs would fail on their next resume with this code:\n"
                         + report.text())
        self.report = report


async def assert_replays(app: ProgramSource, store_url: str, *, manifests: str | None = None,
                         runs: Sequence[str] = (), flow: str | None = None,
                         statuses: Sequence[RunStatus] | None = None) -> ReplayReport:
    """Replay the runs recorded in the store at ``store_url`` (a copy of production's, say)
    against ``app``'s flows, with no effects, as ``tarry replay`` does; raise
    :class:`ReplayFailed` when any would hit nondeterminism or fail otherwise. The runs are
    ``runs``, else every run in ``statuses`` (default: every run that has not ended), of
    ``flow`` if given. ``manifests`` (an ``events.yaml`` text) is needed only if the app's
    flows are checked against event types at load."""
    with tempfile.TemporaryDirectory() as directory, \
            Harness(Path(directory), store_url=store_url, app=app,
                    manifests=manifests) as harness:
        return await harness.assert_replays(runs, flow=flow, statuses=statuses)


class _StubbedChecks(CheckRunner):
    """Answers the stubbed checks itself, at the clock's instant, and runs the others."""

    def __init__(self, stubs: Mapping[str, StubbedCheck], clock: Clock, limits: Limits) -> None:
        super().__init__(timeout=limits.check_timeout,
                         environment=check_environment(os.environ, limits.check_env))
        self.stubs = stubs
        self.clock = clock

    async def run(self, name: str, path: Path, argument: str, *,
                  run_id: str | None = None) -> CheckResult:
        """The stub's answer for ``name``, as if a process had given it at once; else the
        real check at ``path``."""
        stub = self.stubs.get(name)
        if stub is None:
            return await super().run(name, path, argument, run_id=run_id)
        answer = Answer(stub(self.clock.now()))
        return CheckResult(name, answer, exit=exit_for(answer), duration_ms=0)
