"""Moving the held and waiting runs of a YAML flow to a new definition (``tarry runs
migrate``): the store's side of :mod:`tarry.engine.moves`.

Every held or waiting run of the flow whose definition differs from the target is read with
its journal and judged (:func:`tarry.engine.moves.judge`, pure). A dry run reports the
judgements and writes nothing; otherwise each run that can move is written in a short
transaction of its own, only if it is still as it was read (:meth:`Store.move_run`): a run
that woke meanwhile is reported ``skipped`` and left as it is. A run that cannot move is
left untouched and reported with every reason.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tarry.engine.catalog import PROGRAM_PREFIX, FlowCatalog
from tarry.engine.moves import Judgement, RunView, judge
from tarry.engine.versions import upgrade
from tarry.errors import InvalidRunRequest, TarryError
from tarry.language.model import Flow
from tarry.model import MIGRATED, HistoryEntry, JournalEntry, MovePlan, RunRecord, RunStatus
from tarry.store.base import Store

__all__ = ["MOVES", "MoveReport", "RunMove", "migrate_runs", "refuse_programs"]

MOVES = ("moves", "moved", "cannot move", "skipped")
"""What became of a run: it would move (a dry run), it moved, it cannot move (with its
reasons), or it changed while it was being moved and was left alone."""

_PAGE = 200
"""How many runs are read at a time."""


@dataclass(frozen=True)
class RunMove:
    """What became of one run (``outcome``: one of :data:`MOVES`) and why."""

    run_id: str
    status: str
    from_digest: str
    outcome: str
    reasons: tuple[str, ...] = ()

    def document(self) -> dict[str, Any]:
        """``{id, status, from, outcome, reasons}``."""
        return {"id": self.run_id, "status": self.status, "from": self.from_digest,
                "outcome": self.outcome, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class MoveReport:
    """What ``tarry runs migrate`` did (or, as a dry run, would do) to a flow's runs."""

    flow: str
    to_digest: str
    dry_run: bool
    runs: list[RunMove] = field(default_factory=list)
    current: int = 0
    """How many held or waiting runs already have the target definition (left alone)."""

    @property
    def ok(self) -> bool:
        """Whether every run that should move moved (or, as a dry run, would move)."""
        return all(run.outcome in ("moves", "moved") for run in self.runs)

    def counts(self) -> dict[str, int]:
        """How many runs came to each outcome (every outcome listed)."""
        return {outcome: sum(run.outcome == outcome for run in self.runs)
                for outcome in MOVES}

    def document(self) -> dict[str, Any]:
        """``{flow, to, dry_run, runs, counts, current}``."""
        return {"flow": self.flow, "to": self.to_digest, "dry_run": self.dry_run,
                "runs": [run.document() for run in self.runs], "counts": self.counts(),
                "current": self.current}


def refuse_programs(flow: Flow) -> None:
    """Raise ``InvalidRunRequest`` for a Python flow: its runs are not moved, they replay."""
    if flow.source.startswith(PROGRAM_PREFIX):
        raise InvalidRunRequest(
            f"flow '{flow.name}' is a Python flow: its runs replay the current code rather "
            "than keep a definition, so there is nothing to move; guard a change with "
            "ctx.patched(\"<id>\") so that the runs already waiting keep their path, and "
            "check them with tarry replay")


def migrate_runs(store: Store, catalog: FlowCatalog, target: Flow, *, by: str,
                 clock: Callable[[], datetime], dry_run: bool) -> MoveReport:
    """Move (or, with ``dry_run``, judge) every held or waiting run of ``target``'s flow to
    ``target`` (see the module docstring), as ``by``."""
    refuse_programs(target)
    if not dry_run:
        catalog.remember(target)
    runs: list[RunMove] = []
    current = 0
    for page in _candidates(store, target.name):
        moving = [record for record in page if record.flow_digest != target.digest]
        current += len(page) - len(moving)
        journals = store.journals([record.id for record in moving]) if moving else {}
        for record in moving:
            judgement = _judged(catalog, record, journals.get(record.id, []), target, clock())
            runs.append(_moved(store, record, judgement, target, by=by, clock=clock,
                               dry_run=dry_run))
    return MoveReport(target.name, target.digest, dry_run, runs, current)


def _candidates(store: Store, flow: str) -> Iterator[list[RunRecord]]:
    """The held, then the waiting runs of ``flow``, a page at a time, newest first."""
    for status in (RunStatus.HELD, RunStatus.WAITING):
        after: tuple[datetime, str] | None = None
        while True:
            page = store.list_runs(status=status, flow=flow, after=after, limit=_PAGE)
            if page:
                yield page
            if len(page) < _PAGE:
                break
            after = (page[-1].created_at, page[-1].id)


def _judged(catalog: FlowCatalog, record: RunRecord, journal: list[JournalEntry], target: Flow,
            now: datetime) -> Judgement:
    """The judgement of one run, or why its definition or state cannot be judged."""
    try:
        old = catalog.by_digest(record.flow_digest)
        state = upgrade(copy.deepcopy(record.state))
    except TarryError as exc:
        return Judgement((f"the run's definition cannot be read: {exc}",))
    if old.source.startswith(PROGRAM_PREFIX):
        return Judgement(("the run's definition is a Python flow",))
    view = RunView(state, journal, record.inputs,
                   {"id": record.id, "target": record.target,
                    "started_at": state.get("started_at")})
    return judge(view, old, target, now)


def _moved(store: Store, record: RunRecord, judgement: Judgement, target: Flow, *, by: str,
           clock: Callable[[], datetime], dry_run: bool) -> RunMove:
    def outcome(name: str, reasons: tuple[str, ...] = ()) -> RunMove:
        return RunMove(record.id, record.status.value, record.flow_digest, name, reasons)

    if judgement.state is None:
        return outcome("cannot move", judgement.reasons)
    if dry_run:
        return outcome("moves")
    now = clock()
    plan = MovePlan(record.id, record.status, record.state, record.flow_digest, target.digest,
                    judgement.state, HistoryEntry(now, MIGRATED, None, {
                        "from": record.flow_digest, "to": target.digest, "by": by}),
                    wake=judgement.wake)
    if store.move_run(plan, now) is None:
        return outcome("skipped", ("it changed while it was being moved (it woke, or another "
                                   "move came first); run the command again to judge it anew",))
    return outcome("moved")
