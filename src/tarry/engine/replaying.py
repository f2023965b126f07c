"""Replaying the recorded journals of Python runs against the current code: ``tarry replay``.

A deploy that changes a Python flow's code changes what every run of it replays on its next
resume. This module answers, before the deploy, which runs would then fail: it reads each
selected run (its live state and its journal, one consistent reading) and lets its flow
replay what the run recorded (:meth:`~tarry.engine.catalog.Program.replay`), executing
nothing new — no step or check is called, no wait registered, no task opened, nothing
written to the store. Each run comes out:

- ``ok``: the code makes the calls the run recorded, in the same order (or, for a run that
  ended, comes to the same ending);
- ``nondeterminism``: the code no longer makes them; the run would fail so on its next
  resume (the operation, what was recorded and what the code asks for, in the message);
- ``failed``: the replay fails otherwise (an exception the code raises now, the flow no
  longer registered, a state this code cannot read);
- ``skipped``: a run of a YAML flow, which resumes on the definition it started with
  whatever the files say now, so a code change cannot break it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from tarry.actions import ActionRegistry
from tarry.engine.catalog import FlowCatalog
from tarry.engine.interpreter import Env
from tarry.engine.journal import whole_state
from tarry.engine.outcome import Failed
from tarry.engine.versions import upgrade
from tarry.errors import TarryError
from tarry.model import JournalEntry, RunRecord, RunStatus
from tarry.secrets import Redactor
from tarry.store.base import Store
from tarry.values import ValueLimits

__all__ = ["DEFAULT_STATUSES", "ReplayReport", "ReplayResult", "replay_runs"]

DEFAULT_STATUSES = (RunStatus.PENDING, RunStatus.HELD, RunStatus.RUNNING, RunStatus.WAITING)
"""The runs replayed when no status is asked for: every run that has not ended."""

Verdict = Literal["ok", "nondeterminism", "failed", "skipped"]

_PAGE = 200
"""Runs read per listing page (and per journal read)."""

_READINGS = 5
"""How many times a run that changed while it was read is read again before it is left out
(a run a worker checkpoints that often is reported as ``failed`` with the reason)."""

_YAML = ("a YAML flow's run resumes on the definition it started with, whatever the flow "
         "files say now: there is nothing to replay")


@dataclass(frozen=True)
class ReplayResult:
    """What replaying one run came to (see the module docstring for ``verdict``)."""

    run_id: str
    flow: str
    status: str
    """The run's status when it was read."""
    verdict: Verdict
    message: str | None = None
    """Why, for any verdict but ``ok``."""
    operation: str | None = None
    """The operation a ``nondeterminism`` concerns (its path)."""

    def document(self) -> dict[str, Any]:
        """The result as JSON data (``tarry replay --json``)."""
        return {"run": self.run_id, "flow": self.flow, "status": self.status,
                "verdict": self.verdict, "operation": self.operation,
                "message": self.message}

    def line(self) -> str:
        """The result as one line of text."""
        where = f" at {self.operation}" if self.operation else ""
        said = f": {self.message}" if self.message else ""
        return f"{self.run_id} ({self.flow}, {self.status}): {self.verdict}{where}{said}"


@dataclass(frozen=True)
class ReplayReport:
    """Every run a replay looked at."""

    results: tuple[ReplayResult, ...]
    skipped: int = 0
    """How many runs of YAML flows were left out (those named explicitly are in
    ``results`` too)."""

    @property
    def replayed(self) -> list[ReplayResult]:
        """The runs replayed (not skipped)."""
        return [result for result in self.results if result.verdict != "skipped"]

    @property
    def problems(self) -> list[ReplayResult]:
        """The runs that would fail on their next resume: ``nondeterminism`` or ``failed``."""
        return [result for result in self.results
                if result.verdict in ("nondeterminism", "failed")]

    def document(self) -> dict[str, Any]:
        """The report as JSON data: the counts and every result."""
        return {"replayed": len(self.replayed),
                "nondeterminism": sum(r.verdict == "nondeterminism" for r in self.results),
                "failed": sum(r.verdict == "failed" for r in self.results),
                "skipped": self.skipped,
                "runs": [result.document() for result in self.results]}

    def summary(self) -> str:
        """One line: how many runs were replayed and how many would fail."""
        replayed = len(self.replayed)
        counts = self.document()
        text = (f"replayed {replayed} run{'' if replayed == 1 else 's'} of Python flows: "
                f"{counts['nondeterminism']} would hit nondeterminism, {counts['failed']} "
                "would fail otherwise")
        if self.skipped:
            text += (f"; {self.skipped} run{'' if self.skipped == 1 else 's'} of YAML flows "
                     "skipped (a YAML run resumes on the definition it started with)")
        return text

    def text(self) -> str:
        """The report as text: each problem on its line, then the summary."""
        return "\n".join([*(result.line() for result in self.problems), self.summary()])


@dataclass(frozen=True)
class _Context:
    """What replaying a run needs besides the run."""

    catalog: FlowCatalog
    now: datetime
    limits: ValueLimits
    redactor: Redactor


async def replay_runs(store: Store, catalog: FlowCatalog, *, now: datetime,
                      run_ids: Sequence[str] = (), flow: str | None = None,
                      statuses: Sequence[RunStatus] | None = None,
                      limits: ValueLimits | None = None,
                      redactor: Redactor | None = None) -> ReplayReport:
    """Replay the runs selected — ``run_ids`` (``RunNotFound`` for an unknown one), else
    every run in ``statuses`` (default :data:`DEFAULT_STATUSES`), of ``flow`` if given —
    reading the store and writing nothing to it."""
    context = _Context(catalog, now, limits or ValueLimits(), redactor or Redactor())
    results: list[ReplayResult] = []
    skipped = 0
    named = bool(run_ids)
    for page in _pages(store, run_ids, flow, statuses):
        python = [record for record in page if _is_python(catalog, record) is not False]
        for record in page:
            if _is_python(catalog, record) is False:
                skipped += 1
                if named:
                    results.append(ReplayResult(record.id, record.flow, record.status.value,
                                                "skipped", _YAML))
        for record, entries in _consistent(store, python):
            results.append(await _replay(context, record, entries))
    return ReplayReport(tuple(results), skipped)


def _pages(store: Store, run_ids: Sequence[str], flow: str | None,
           statuses: Sequence[RunStatus] | None) -> Iterator[list[RunRecord]]:
    if run_ids:
        records = [store.get_run(run_id) for run_id in run_ids]
        yield [record for record in records
               if (flow is None or record.flow == flow)
               and (statuses is None or record.status in statuses)]
        return
    for status in statuses or DEFAULT_STATUSES:
        after: tuple[datetime, str] | None = None
        while True:
            page = store.list_runs(status=status, flow=flow, after=after, limit=_PAGE)
            if page:
                yield page
            if len(page) < _PAGE:
                break
            after = (page[-1].created_at, page[-1].id)


def _is_python(catalog: FlowCatalog, record: RunRecord) -> bool | None:
    """Whether the run's flow is a Python flow; None when its flow cannot be found (its
    replay says why)."""
    try:
        flow = catalog.by_digest(record.flow_digest)
    except TarryError:
        return None
    return catalog.program(flow) is not None


def _consistent(store: Store, records: Sequence[RunRecord]
                ) -> Iterable[tuple[RunRecord, list[JournalEntry] | None]]:
    """Each run with its journal, read so that the two agree: a run a worker checkpointed
    between the two readings (its row changed) is read again; None for the journal of one
    that kept changing."""
    if not records:
        return
    journals = store.journals([record.id for record in records])
    for listed in records:
        record, entries = listed, journals.get(listed.id, [])
        for _ in range(_READINGS):
            again = store.get_run(record.id)
            if (again.updated_at, again.status, again.state) == (record.updated_at,
                                                                 record.status, record.state):
                yield record, entries
                break
            record, entries = again, store.journals([record.id]).get(record.id, [])
        else:
            yield record, None


async def _replay(context: _Context, record: RunRecord,
                  entries: Sequence[JournalEntry] | None) -> ReplayResult:
    def result(verdict: Verdict, message: str | None = None,
               operation: str | None = None) -> ReplayResult:
        return ReplayResult(record.id, record.flow, record.status.value, verdict, message,
                            operation)

    if entries is None:
        return result("failed", f"the run changed each of the {_READINGS} times it was read "
                                "(a worker is advancing it); replay it again")

    try:
        flow = context.catalog.by_digest(record.flow_digest)
        program = context.catalog.program(flow)
        state = whole_state(upgrade(copy.deepcopy(record.state)), entries)
    except TarryError as exc:
        return result("failed", str(exc))
    except Exception as exc:  # a state this code cannot read: reported, never raised
        return result("failed", f"the run's state cannot be read: {type(exc).__name__}: {exc}")
    if program is None:
        return result("skipped", _YAML)
    env = Env(run_id=record.id, flow=flow, now=context.now, inputs=dict(record.inputs),
              run_info={"id": record.id, "target": record.target,
                        "started_at": state.get("started_at")},
              actions=ActionRegistry(), checkpoint=_no_checkpoint, limits=context.limits,
              redact=context.redactor)
    try:
        outcome = await program.replay(env, state)
    except Exception as exc:  # the replay's own trouble: reported, never raised
        return result("failed", f"the replay itself failed: {type(exc).__name__}: {exc}")
    if not isinstance(outcome, Failed):
        return result("ok")
    error = outcome.error
    if error["type"] == "nondeterminism":
        return result("nondeterminism", error["message"], error.get("step"))
    if record.error is not None and record.error.get("type") == error["type"]:
        return result("ok")  # the failure the run recorded, replayed
    return result("failed", f"{error['type']}: {error['message']}", error.get("step"))


async def _no_checkpoint() -> None:
    raise RuntimeError("a replay executes nothing new, so it never checkpoints")
