"""A fleet of real ``tarry worker`` processes over one PostgreSQL database, and what the fleet
tests read back from it.

- :func:`write_project`: a project whose flow runs a user action (appending
  ``run_id step_path attempt`` to a journal file with one ``O_APPEND`` write), then a short
  ``wait``, then a ``wait_for`` of a reply that only some runs are sent;
- :func:`create_runs`: thousands of runs inserted in one transaction, with the store's own
  ``insert_run`` / ``insert_history`` SQL (one durable transaction per run would cost
  seconds); :func:`send_replies` sends events through ``Engine.send``;
- :class:`Fleet`: worker processes started, SIGKILLed, replaced and stopped;
- the evidence, read straight from the database and the journal: :func:`unfinished`,
  :func:`status_counts`, :func:`run_errors`, :func:`transition_counts`,
  :func:`transition_problems` (what was not recorded exactly once), :func:`reply_statuses`,
  :func:`recovered_runs`, :func:`journal_counts` and :func:`action_problems` (what breaks
  the at-least-once guarantee).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import pytest

from tarry.clock import SystemClock
from tarry.config import load_settings
from tarry.engine.runtime import Engine, new_run_id
from tarry.language.inputs import bind_inputs
from tarry.model import CREATED, HistoryEntry, NewRun, RunStatus
from tarry.store import open_store

TARRY = Path(sys.executable).parent / "tarry"
FLOW_NAME = "fleet"
REPLY_TYPE = "fleet.reply"
ACTION_STEPS = ("first",)
STEPS = ("first", "nap", "reply")
WAITS = ("nap", "reply")
T = TypeVar("T")
Transition = tuple[str, str, str | None]
"""A history entry's run, kind and step."""

_FLOW = """\
flow: fleet
inputs:
  pause: { type: duration, required: true }
  patience: { type: duration, required: true }
steps:
  - first:
      append: { file: JOURNAL }
  - nap:
      wait: { for: "{{ pause }}" }
  - reply:
      wait_for: fleet.reply
      match: { run: "{{ run.id }}" }
      timeout: "{{ patience }}"
"""

_MANIFESTS = """\
events:
  fleet.reply:
    correlate_on: [run]
"""

_ACTIONS = '''\
"""The fleet tests' user action: one line per call, appended with a single write."""

import os


def append(args, ctx):
    line = f"{ctx.run_id} {ctx.step_path} {ctx.attempt}\\n".encode()
    descriptor = os.open(args["file"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, line)
    finally:
        os.close(descriptor)
'''


@dataclass(frozen=True)
class FleetProject:
    """A project folder whose ``tarry.toml`` names the database at ``url``."""

    root: Path
    url: str

    @property
    def journal(self) -> Path:
        """The file the ``append`` action writes to."""
        return self.root / "journal.txt"

    def engine(self) -> Engine:
        """An engine of this project in this process (close it)."""
        return Engine.from_settings(load_settings(cwd=self.root, env={}))


def write_project(root: Path, url: str) -> FleetProject:
    """Write ``tarry.toml`` (the store and the ``append`` action), the flow, the manifest and
    the action's module into ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    project = FleetProject(root.resolve(), url)
    (root / "tarry.toml").write_text(
        f'[tarry]\ndatabase = {json.dumps(url)}\n\n[actions]\nappend = "fleet_actions:append"\n',
        encoding="utf-8")
    (root / "flows").mkdir()
    (root / "flows" / "fleet.yaml").write_text(
        _FLOW.replace("JOURNAL", json.dumps(str(project.journal))), encoding="utf-8")
    (root / "events.yaml").write_text(_MANIFESTS, encoding="utf-8")
    (root / "fleet_actions.py").write_text(_ACTIONS, encoding="utf-8")
    return project


def run_inputs(rng: random.Random, *, answered: bool, longest_pause: int) -> dict[str, str]:
    """Inputs of one run: a pause of 0.5 s to ``longest_pause`` ms; a long patience when the
    run will be sent its reply (so it cannot time out first), 1 s otherwise."""
    return {"pause": f"{rng.randrange(500, longest_pause)}ms",
            "patience": "30s" if answered else "1s"}


def create_runs(project: FleetProject, inputs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Create one pending run of the fleet flow per input mapping, all in one transaction
    (what ``Engine.start`` writes per run: the run row and its ``created`` entry)."""
    engine = project.engine()
    try:
        flow = engine.catalog.resolve(FLOW_NAME)  # saves the flow's source in the store
    finally:
        engine.close()
    now = SystemClock().now()
    runs = [NewRun(id=new_run_id(), flow=flow.name, flow_digest=flow.digest,
                   status=RunStatus.PENDING, inputs=bind_inputs(flow, each), target=None,
                   created_at=now, due_at=now) for each in inputs]
    store = open_store(project.url)
    try:
        store.create_runs([(run, [HistoryEntry(now, CREATED)]) for run in runs])
    finally:
        store.close()
    return [run.id for run in runs]


def send_replies(project: FleetProject, run_ids: Sequence[str]) -> None:
    """Send each run its reply through ``Engine.send`` (buffered if it is not waiting yet)."""
    engine = project.engine()
    try:
        for run_id in run_ids:
            engine.send(REPLY_TYPE, {"run": run_id})
    finally:
        engine.close()


@dataclass
class Worker:
    """One ``tarry worker`` process and the file it logs to."""

    process: subprocess.Popen[bytes]
    log: Path

    def started(self) -> bool:
        """Whether it has opened the store and begun working (it logs so)."""
        return b" started on " in self.log.read_bytes()


@dataclass
class Fleet:
    """``tarry worker`` processes of one project; each logs to its own file in ``logs``."""

    project: FleetProject
    options: tuple[str, ...]
    logs: Path
    workers: list[Worker] = field(default_factory=list)
    killed: int = 0

    def start(self, count: int = 1) -> None:
        """Start ``count`` more workers."""
        self.logs.mkdir(exist_ok=True)
        env = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
        for _ in range(count):
            log = self.logs / f"worker-{len(list(self.logs.iterdir()))}.log"
            with log.open("wb") as output:
                process = subprocess.Popen(
                    [str(TARRY), "worker", *self.options], cwd=self.project.root, env=env,
                    stdout=output, stderr=subprocess.STDOUT)
            self.workers.append(Worker(process, log))

    def kill_one_and_replace(self, rng: random.Random) -> None:
        """SIGKILL a random worker and start another in its place."""
        victim = self.workers.pop(rng.randrange(len(self.workers))).process
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=10)
        self.killed += 1
        self.start()

    def alive(self) -> bool:
        """Whether every worker is still running."""
        return all(worker.process.poll() is None for worker in self.workers)

    def stop(self) -> list[int | None]:
        """Once every worker has started, SIGTERM each and wait for it; their exit codes."""
        wait_until(lambda: True if all(w.started() for w in self.workers) else None,
                   seconds=30, what="every worker to start")
        for worker in self.workers:
            worker.process.send_signal(signal.SIGTERM)
        codes = []
        for worker in self.workers:
            try:
                codes.append(worker.process.wait(timeout=15))
            except subprocess.TimeoutExpired:
                codes.append(None)
        return codes

    def kill_all(self) -> None:
        """SIGKILL whatever still runs (the test's own cleanup)."""
        for worker in self.workers:
            if worker.process.poll() is None:
                worker.process.kill()
                worker.process.wait()

    def log_text(self) -> str:
        """Every worker's log, one after the other."""
        return "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')}"
                         for log in sorted(self.logs.glob("*.log")))


def unfinished(url: str) -> bool:
    """Whether any run may still be due (every run not yet ended has a ``due_at``): one
    look at the claim index, cheap enough to poll."""
    with psycopg.connect(url) as connection:
        return connection.execute(
            "SELECT 1 FROM runs WHERE due_at IS NOT NULL LIMIT 1").fetchone() is not None


def status_counts(url: str) -> Counter[str]:
    """How many runs have each status."""
    with psycopg.connect(url) as connection:
        found = connection.execute("SELECT status, count(*) FROM runs GROUP BY status")
        return Counter(dict(found.fetchall()))


def run_errors(url: str) -> Counter[str]:
    """The errors of failed runs, by message (to explain a failed assertion)."""
    with psycopg.connect(url) as connection:
        found = connection.execute("SELECT error ->> 'message' FROM runs WHERE error IS NOT NULL")
        return Counter(message for message, in found)


def transition_counts(url: str) -> Counter[Transition]:
    """How often each (run, kind, step) appears in the history (a run's ``created`` entry is
    kept in its row)."""
    with psycopg.connect(url) as connection:
        found = connection.execute(
            "SELECT run_id, kind, step, count(*) FROM ("
            " SELECT run_id, kind, step FROM history"
            " UNION ALL SELECT id, 'created', NULL FROM runs WHERE created_data IS NOT NULL"
            ") AS entries GROUP BY run_id, kind, step")
        return Counter({(run_id, kind, step): count for run_id, kind, step, count in found})


def store_transition_counts(engine: Engine, run_ids: Sequence[str]) -> Counter[Transition]:
    """:func:`transition_counts` read through the store interface (any backend)."""
    return Counter((run_id, entry.kind, entry.step) for run_id in run_ids
                   for entry in engine.store.history(run_id))


def store_status_counts(engine: Engine, run_ids: Sequence[str]) -> Counter[str]:
    """:func:`status_counts` through the store interface."""
    return Counter(str(engine.get(run_id).status) for run_id in run_ids)


def store_reply_statuses(engine: Engine, run_ids: Sequence[str]) -> dict[str, str]:
    """:func:`reply_statuses` from the run documents (any backend)."""
    return {run_id: engine.document(run_id, history=False)["bindings"]["reply"]["status"]
            for run_id in run_ids}


def expected_transitions(run_id: str, *, answered: bool) -> dict[Transition, int]:
    """The history entries a run of the fleet flow must have exactly once (or, by outcome,
    never)."""
    once: dict[Transition, int] = {(run_id, "created", None): 1, (run_id, "succeeded", None): 1}
    for step in STEPS:
        once[run_id, "step.started", step] = 1
        once[run_id, "step.completed", step] = 1
    for step in WAITS:
        once[run_id, "wait.registered", step] = 1
    once[run_id, "event.received", "reply"] = int(answered)
    once[run_id, "wait.timeout", "reply"] = int(not answered)
    return once


def transition_problems(counts: Mapping[Transition, int], run_ids: Sequence[str],
                        answered: Collection[str]) -> list[str]:
    """The transitions not recorded exactly as often as :func:`expected_transitions` says."""
    return [f"{kind} {step or ''} of run {run_id}: {counts.get((run_id, kind, step), 0)} times"
            for run_id in run_ids
            for (_, kind, step), times in expected_transitions(
                run_id, answered=run_id in answered).items()
            if counts.get((run_id, kind, step), 0) != times]


def reply_statuses(url: str) -> dict[str, str]:
    """Each run's ``reply`` binding status (``received`` or ``timeout``): a completed
    top-level step's binding is in the run's journal (scope ``""``, key: the step id)."""
    with psycopg.connect(url) as connection:
        found = connection.execute(
            "SELECT run_id, value ->> 'status' FROM run_journal"
            " WHERE scope = '' AND key = 'reply'")
        return dict(found.fetchall())


def recovered_runs(counts: Mapping[Transition, int]) -> set[str]:
    """The runs whose history shows a takeover after a lapsed lease."""
    return {run_id for run_id, kind, _ in counts if kind == "recovered"}


def journal_counts(journal: Path) -> Counter[tuple[str, str, str]]:
    """How often the action wrote each (run, step, attempt) line."""
    lines = journal.read_text(encoding="utf-8").splitlines() if journal.exists() else []
    return Counter(tuple(line.split(" ")) for line in lines)  # type: ignore[misc]


def action_problems(calls: Mapping[tuple[str, str, str], int], run_ids: Sequence[str],
                    recovered: Collection[str]) -> list[str]:
    """What the journal shows against the at-least-once guarantee: a (run, step) never
    called, or called for an unknown run, or more than once by a run no worker took over, or
    an attempt other than 1 in a run no worker took over (the flow has no ``retry``), or
    one attempt number written twice (a re-run after a takeover counts as an attempt)."""
    expected = {(run_id, step) for run_id in run_ids for step in ACTION_STEPS}
    called = Counter({(run_id, step): count for (run_id, step, _), count in calls.items()})
    return ([f"never called: {run_id} {step}" for run_id, step in expected - set(called)]
            + [f"called for no run of the test: {run_id} {step}"
               for run_id, step in set(called) - expected]
            + [f"called {count} times though no worker took the run over: {run_id} {step}"
               for (run_id, step), count in called.items()
               if count > 1 and run_id not in recovered]
            + [f"attempt {attempt}: {run_id} {step}" for run_id, step, attempt in calls
               if attempt != "1" and run_id not in recovered]
            + [f"attempt {attempt} written {count} times: {run_id} {step}"
               for (run_id, step, attempt), count in calls.items() if count > 1])


def wait_until(probe: Callable[[], T | None], *, seconds: float, what: str,
               between: Callable[[], None] = lambda: time.sleep(0.2),
               explain: Callable[[], str] = lambda: "") -> T:
    """Call ``probe`` (and ``between`` after each miss) until it answers something other
    than None; fail the test after ``seconds``, saying ``explain()`` of what was left."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        answer = probe()
        if answer is not None:
            return answer
        between()
    pytest.fail(f"gave up after {seconds:.0f}s waiting for {what}; {explain()}")
