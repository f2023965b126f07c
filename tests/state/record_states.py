"""Stored states: runs of this release caught waiting, in every kind of wait, kept as files.

A run may wait for weeks across releases, so a newer tarry must resume a state an older
one wrote exactly as that one would have. Each :class:`Case` starts a small flow (YAML, or
a Python flow of ``state_app``), drives it on a virtual clock until it waits, and keeps what
the store holds of the run — its row, its journal and the flow's source — in
``tests/state/v<state version>/<case>.json``. ``test_stored_states.py`` loads each file
into an empty store, resumes the run and checks that it waits for the same thing, then
finishes the script and checks the outcome.

Regenerate the files of the current version (and review the diff) with::

    .venv/bin/python tests/state/record_states.py [CASE…]

Files of earlier versions are never regenerated: they were written by earlier releases (the
``v0`` files by the release before the journal, with this script run against that code).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from state_app import app  # noqa: E402

from tarry.clock import iso  # noqa: E402
from tarry.language.calendars import Calendar, parse_hours  # noqa: E402
from tarry.testing import Harness  # noqa: E402

START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)

MANIFESTS = """\
events:
  order.reply: { correlate_on: [order] }
  email.reply: { correlate_on: [ticket] }
  portal.reply: { correlate_on: [case] }
  item.reply: { correlate_on: [item] }
"""


@dataclass(frozen=True)
class Advance:
    """Move the virtual clock forward, running every wake on the way."""

    delta: timedelta


@dataclass(frozen=True)
class Send:
    """Send an event now, then run what is due."""

    type: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Complete:
    """Complete the one open task now, as principal ``by``, then run what is due."""

    outcome: str
    by: str


Move = Advance | Send | Complete


@dataclass(frozen=True)
class Case:
    """A flow driven to a wait (``before``), kept, then resumed and finished (``after``)."""

    name: str
    flow: str
    """YAML source, or the name of a flow of ``state_app``."""
    inputs: dict[str, Any] = field(default_factory=dict)
    before: tuple[Move, ...] = ()
    after: tuple[Move, ...] = ()
    expect: dict[str, Any] = field(default_factory=dict)
    """``status``, ``exit``, and ``bindings`` or ``result`` the finished run must have."""
    flows: dict[str, str] = field(default_factory=dict)
    """Other flows the case's flow calls (YAML source by name), in the flows folder."""
    preceded_by: int = 0
    """Runs of the same flow (and inputs) started and run first (a throttle's turns)."""
    since: int = 0
    """The first state version with this case (a kind of wait added later has no files of
    the versions before it)."""


TIMER = """\
flow: stored-timer
inputs:
  name: { type: string, required: true }
steps:
  - greet: { set: { text: "hello {{ name }}" } }
  - pad: { set: { blob: "{{ name }}-0123456789" } }
  - nap: { wait: { for: 1h } }
  - done: { set: { said: "{{ greet.text }}" } }
"""

EVENT = """\
flow: stored-event
inputs:
  order: { type: string, required: true }
steps:
  - greet: { set: { text: "order {{ order }}" } }
  - reply:
      wait_for: order.reply
      match: { order: "{{ order }}" }
      timeout: 1d
  - done: { set: { status: "{{ reply.status }}", said: "{{ greet.text }}" } }
"""

ANY = """\
flow: stored-any
steps:
  - reply:
      wait_for:
        any:
          - { event: email.reply, match: { ticket: "t-7" } }
          - { event: portal.reply, match: { case: "c-7" } }
      timeout: 2d
"""

POLL = """\
flow: stored-poll
steps:
  - indexed:
      repeat: { every: 30s, max: 5, until: "{{ check.n >= 2 }}" }
      steps:
        - check: { set: { n: "{{ loop.index }}" } }
"""

REMINDER = """\
flow: stored-reminder
steps:
  - reply:
      wait_for: order.reply
      match: { order: "o-9" }
      timeout: 3h
      remind:
        every: 1h
        steps:
          - nudge: { log: { message: "still waiting" } }
"""

HOLD = """\
flow: stored-hold
hold:
  - after: "2026-06-01T12:00:00Z"
steps:
  - go: { set: { went: true } }
"""

CHILD = """\
flow: stored-child
steps:
  - nap: { wait: { for: 1h } }
  - done: { exit: rested }
"""

CALL = """\
flow: stored-call
steps:
  - kid:
      call: { flow: stored-child }
  - done: { set: { status: "{{ kid.status }}", exit: "{{ kid.exit }}" } }
"""

THROTTLE = """\
flow: stored-throttle
inputs:
  team: { type: string, required: true }
throttle: { key: "{{ team }}", limit: 1, per: 1h }
steps:
  - go: { set: { went: "{{ team }}" } }
"""

FOR_EACH = """\
flow: stored-branches
steps:
  - replies:
      for_each: "{{ ['a', 'b', 'c'] }}"
      concurrency: 2
      steps:
        - reply:
            wait_for: item.reply
            match: { item: "{{ item }}" }
            timeout: 1d
"""

SLOT = """\
flow: stored-slot
inputs:
  repo: { type: string, required: true }
concurrency: { key: "{{ repo }}", limit: 1 }
steps:
  - soak: { wait: { for: 1h } }
  - done: { set: { repo: "{{ repo }}" } }
"""

WINDOW = """\
flow: stored-window
steps:
  - ship:
      window: deploy
      set: { went: true }
  - settle: { wait: { for: { for: 2h, calendar: deploy } } }
"""

CALENDARS = {"deploy": Calendar("deploy", ZoneInfo("Europe/Berlin"),
                                parse_hours({"tue-thu": "10:00-16:00"}))}
"""The calendars the cases name: Tuesday to Thursday, 10:00-16:00 in Berlin."""

CASES: tuple[Case, ...] = (
    Case("yaml-timer", TIMER, {"name": "ada"}, after=(Advance(timedelta(hours=2)),),
         expect={"status": "succeeded", "exit": "completed",
                 "bindings": {"greet": {"text": "hello ada"}, "done": {"said": "hello ada"}}}),
    Case("yaml-event", EVENT, {"order": "o-1"},
         before=(Advance(timedelta(hours=1)),),
         after=(Send("order.reply", {"order": "o-1"}),),
         expect={"status": "succeeded",
                 "bindings": {"done": {"status": "received", "said": "order o-1"}}}),
    Case("yaml-any", ANY, after=(Send("portal.reply", {"case": "c-7"}),),
         expect={"status": "succeeded",
                 "bindings": {"reply": {"status": "received", "type": "portal.reply"}}}),
    Case("yaml-poll", POLL, after=(Advance(timedelta(minutes=2)),),
         expect={"status": "succeeded", "bindings": {"indexed": [
             {"check": {"n": 0}}, {"check": {"n": 1}}, {"check": {"n": 2}}]}}),
    Case("yaml-reminder", REMINDER, before=(Advance(timedelta(minutes=90)),),
         after=(Advance(timedelta(hours=2)),),
         expect={"status": "succeeded", "bindings": {"reply": {"status": "timeout"}}}),
    Case("yaml-hold", HOLD, after=(Advance(timedelta(hours=4)),),
         expect={"status": "succeeded", "bindings": {"go": {"went": True}}}),
    Case("yaml-throttle", THROTTLE, {"team": "ops"}, preceded_by=1, since=3,
         after=(Advance(timedelta(hours=2)),),
         expect={"status": "succeeded", "bindings": {"go": {"went": "ops"}}}),
    Case("yaml-for-each", FOR_EACH, before=(Send("item.reply", {"item": "a"}),),
         after=(Send("item.reply", {"item": "c"}), Send("item.reply", {"item": "b"})),
         expect={"status": "succeeded", "bindings": {"replies": [
             {"reply": {"status": "received"}}, {"reply": {"status": "received"}},
             {"reply": {"status": "received"}}]}}),
    Case("yaml-slot", SLOT, {"repo": "acme/web"}, after=(Advance(timedelta(hours=1)),),
         expect={"status": "succeeded", "bindings": {"done": {"repo": "acme/web"}}}, since=3),
    Case("yaml-child", CALL, flows={"stored-child": CHILD}, since=3,
         after=(Advance(timedelta(hours=2)),),
         expect={"status": "succeeded", "bindings": {"kid": {"status": "succeeded",
                                                             "exit": "rested"},
                                                     "done": {"exit": "rested"}}}),
    Case("yaml-window", WINDOW, after=(Advance(timedelta(days=2)),), since=3,
         expect={"status": "succeeded", "bindings": {"ship": {"went": True}}}),
    Case("sdk-timer", "sdk-timer", {"name": "ada"}, after=(Advance(timedelta(hours=2)),),
         expect={"status": "succeeded", "result": {"text": "hello ada"}}),
    Case("sdk-event", "sdk-event", {"order": "o-2"},
         after=(Send("order.reply", {"order": "o-2", "ok": True}),),
         expect={"status": "succeeded",
                 "result": {"status": "received", "event": {"order": "o-2", "ok": True}}}),
    Case("sdk-condition", "sdk-condition", before=(Advance(timedelta(seconds=15)),),
         after=(Advance(timedelta(minutes=1)),), expect={"status": "succeeded", "result": 3}),
    Case("sdk-branches", "sdk-branches", before=(Advance(timedelta(minutes=15)),),
         after=(Advance(timedelta(minutes=10)),),
         expect={"status": "succeeded", "result": [10, 20]}),
)


def harness(directory: Path, *, start: datetime = START,
            store_url: str | None = None) -> Harness:
    """The harness every case runs on (the app's flows, the cases' event types)."""
    return Harness(directory, start=start, store_url=store_url, manifests=MANIFESTS, app=app,
                   calendars=CALENDARS)


async def play(h: Harness, moves: Sequence[Move]) -> None:
    """Run ``moves`` on ``h``."""
    for move in moves:
        if isinstance(move, Advance):
            await h.advance(move.delta)
            continue
        if isinstance(move, Send):
            h.send(move.type, move.data)
        else:
            [task] = h.engine.tasks()
            h.engine.complete_task(task.id, outcome=move.outcome, by=move.by)
        await h.run_due()


def start(h: Harness, case: Case) -> str:
    """Start the run of ``case``; its id."""
    flow = h.flow(case.flow) if "\n" in case.flow else case.flow
    return h.start(flow, case.inputs)


async def record(case: Case, directory: Path) -> dict[str, Any]:
    """Drive ``case`` to its wait; what the store holds of the run then."""
    h = harness(directory)
    try:
        for _ in range(case.preceded_by):
            start(h, case)
            await h.run_due()
        for name, source in case.flows.items():
            (directory / "flows").mkdir(parents=True, exist_ok=True)
            (directory / "flows" / f"{name}.yaml").write_text(source, encoding="utf-8")
        run_id = start(h, case)
        await h.run_due()
        await play(h, case.before)
        store = h.engine.store
        run = store.get_run(run_id)
        journals: Callable[[list[str]], dict[str, list[Any]]] | None = getattr(
            store, "journals", None)
        journal = journals([run_id]).get(run_id, []) if journals else []
        document = {
            "case": case.name, "version": _writing_version(),
            "now": iso(h.clock.now()), "source": store.flow_source(run.flow_digest),
            "run": _run(run),
            "journal": [[entry.scope, entry.key, entry.value] for entry in journal],
        }
        if case.flows:  # the children it waits for, each with its flow's source
            step = (run.waiting_for or {}).get("step")
            document["children"] = [
                {"source": store.flow_source(child.flow_digest),
                 "run": {**_run(child), "parent_id": run_id, "parent_step": step}}
                for child in map(store.get_run, store.children(run_id))]
        return document
    finally:
        h.close()


def _run(run: Any) -> dict[str, Any]:
    """What a stored state keeps of a run's row."""
    return {"id": run.id, "flow": run.flow, "flow_digest": run.flow_digest,
            "status": run.status.value, "inputs": run.inputs, "target": run.target,
            "created_at": iso(run.created_at), "state": run.state,
            "waiting_for": run.waiting_for,
            "due_at": iso(run.due_at) if run.due_at else None}


def _writing_version() -> int:
    """The state version of the tarry that records (0: a release before state versions)."""
    try:
        from tarry.engine.versions import STATE_VERSION  # noqa: PLC0415
    except ImportError:
        return 0
    return STATE_VERSION


def path_of(version: int, name: str) -> Path:
    """Where the stored state of case ``name`` at state ``version`` lives."""
    return HERE / f"v{version}" / f"{name}.json"


def dump(document: dict[str, Any]) -> str:
    """A stored state's text (stable: sorted keys, two-space indent)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


async def main(names: Sequence[str] = ()) -> None:
    """Record every case (those named, if any) with the tarry on the import path."""
    with tempfile.TemporaryDirectory() as folder:
        for case in CASES:
            if names and case.name not in names:
                continue
            document = await record(case, Path(folder) / case.name)
            target = path_of(document["version"], case.name)
            target.parent.mkdir(exist_ok=True)
            target.write_text(dump(document), encoding="utf-8")
            print(f"wrote {target.relative_to(HERE.parent.parent)}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
