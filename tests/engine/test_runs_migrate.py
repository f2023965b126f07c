"""Moving waiting YAML runs to a fixed definition, end to end on both stores: each kind of
wait moves, keeps its deadline and correlation, and then finishes on the new definition;
each kind of "cannot move" is refused with its reason and the run is left as it was; a run
that woke between the judgement and the write is skipped, never corrupted."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry import App, Context
from tarry.engine.migrating import MoveReport
from tarry.engine.moves import RunView, judge
from tarry.errors import InvalidRunRequest
from tarry.model import MIGRATED, HistoryEntry, MovePlan, RunStatus
from tarry.testing import Harness

START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)

MANIFESTS = """\
events:
  order.reply: { correlate_on: [order] }
  item.reply: { correlate_on: [item] }
"""


class Project:
    """A harness whose flows folder the test writes, one version of a flow after another."""

    def __init__(self, directory: Path, store_url: str) -> None:
        self.flows = directory / "flows"
        self.flows.mkdir()
        self.h = Harness(directory, start=START, store_url=store_url, manifests=MANIFESTS)

    def put(self, source: str) -> None:
        """Write (or rewrite) the flow file of the flow ``source`` defines."""
        name = source.split("\n", 1)[0].removeprefix("flow: ").strip()
        (self.flows / f"{name}.yaml").write_text(source, encoding="utf-8")

    def migrate(self, flow: str, *, dry_run: bool = False) -> MoveReport:
        return self.h.engine.migrate_runs(flow, by="ops", dry_run=dry_run)


@pytest.fixture
def project(tmp_path: Path, store_url: str) -> Iterator[Project]:
    made = Project(tmp_path, store_url)
    try:
        yield made
    finally:
        made.h.close()


def _moved_once(project: Project, flow: str, run_id: str) -> None:
    """Move the flow's runs: ``run_id`` moves, and its history says so."""
    before = project.h.record(run_id)
    dry = project.migrate(flow, dry_run=True)
    assert [(run.run_id, run.outcome) for run in dry.runs] == [(run_id, "moves")]
    assert project.h.record(run_id) == before  # a dry run changes nothing
    report = project.migrate(flow)
    assert [(run.run_id, run.outcome) for run in report.runs] == [(run_id, "moved")]
    assert report.ok
    after = project.h.record(run_id)
    assert after.flow_digest == report.to_digest != before.flow_digest
    [entry] = [e for e in project.h.engine.store.history(run_id) if e.kind == MIGRATED]
    assert entry.data == {"from": before.flow_digest, "to": report.to_digest, "by": "ops"}
    assert project.migrate(flow).runs == []  # already on it: nothing more to move
    assert project.migrate(flow).current == 1


TIMER_V1 = """flow: timer
inputs:
  name: { type: string, required: true }
steps:
  - greet: { set: { text: "helo {{ name }}" } }
  - nap: { wait: { for: 1h } }
  - done: { set: { said: "{{ greet.text }}", how: "as it was" } }
"""
TIMER_V2 = """flow: timer
inputs:
  name: { type: string, required: true }
steps:
  - greet: { set: { text: "helo {{ name }}" } }
  - nap: { wait: { for: 2h } }
  - done: { set: { said: "{{ greet.text }}", how: "fixed" } }
  - appended: { set: { also: true } }
"""


async def test_a_run_waiting_on_a_timer_moves_keeps_its_instant_and_runs_the_new_steps(
        project: Project) -> None:
    project.put(TIMER_V1)
    run_id = project.h.start("timer", {"name": "ada"})
    await project.h.run_due()
    waiting = project.h.record(run_id)
    project.put(TIMER_V2)
    _moved_once(project, "timer", run_id)
    moved = project.h.record(run_id)
    assert (moved.status, moved.due_at, moved.waiting_for) == (
        RunStatus.WAITING, waiting.due_at, waiting.waiting_for)
    await project.h.advance(timedelta(hours=1))
    document = project.h.document(run_id)
    assert document["status"] == "succeeded"
    assert document["bindings"]["done"] == {"said": "helo ada", "how": "fixed"}
    assert document["bindings"]["appended"] == {"also": True}


EVENT_V1 = """flow: event
inputs:
  order: { type: string, required: true }
steps:
  - reply:
      wait_for: order.reply
      match: { order: "{{ order }}" }
      timeout: 1d
  - done: { set: { status: "{{ reply.status }}" } }
"""
EVENT_V2 = EVENT_V1.replace("timeout: 1d", "timeout: 3d") + (
    "  - thanked: { set: { text: \"thanks for {{ reply.event.order }}\" } }\n")


async def test_a_run_waiting_for_an_event_moves_and_the_event_still_finds_it(
        project: Project) -> None:
    project.put(EVENT_V1)
    run_id = project.h.start("event", {"order": "o-1"})
    await project.h.run_due()
    deadline = project.h.record(run_id).due_at
    project.put(EVENT_V2)
    _moved_once(project, "event", run_id)
    assert project.h.record(run_id).due_at == deadline  # the deadline does not move
    event = project.h.send("order.reply", {"order": "o-1"})
    assert event.runs == (run_id,)
    await project.h.run_due()
    document = project.h.document(run_id)
    assert document["status"] == "succeeded"
    assert document["bindings"]["thanked"] == {"text": "thanks for o-1"}


ASK_V1 = """flow: review
steps:
  - review:
      ask: { title: "Check the quote", outcomes: [accept, reject] }
      timeout: 3d
  - decided: { set: { said: "{{ review.outcome }}d" } }
"""
ASK_V2 = ASK_V1.replace("\"{{ review.outcome }}d\"",
                        "\"{{ review.outcome }}ed by {{ review.by }}\"")


async def test_a_run_waiting_for_a_person_moves_with_its_task_open(project: Project) -> None:
    project.put(ASK_V1)
    run_id = project.h.start("review")
    await project.h.run_due()
    task = project.h.task(run_id, "review")
    project.put(ASK_V2)
    _moved_once(project, "review", run_id)
    assert project.h.task(run_id, "review") == task  # the same task, still open
    project.h.complete_task(run_id, "review", outcome="accept", by="alice")
    await project.h.run_due()
    document = project.h.document(run_id)
    assert document["status"] == "succeeded"
    assert document["bindings"]["decided"] == {"said": "accepted by alice"}


POLL_V1 = """flow: poll
steps:
  - indexed:
      repeat: { every: 30s, max: 5, until: "{{ check.n >= 2 }}" }
      steps:
        - check: { set: { n: "{{ loop.index }}", by: old } }
"""
POLL_V2 = POLL_V1.replace("by: old", "by: new") + "  - after: { set: { polled: true } }\n"


async def test_a_repeat_paused_between_iterations_moves_and_iterates_on_the_new_steps(
        project: Project) -> None:
    project.put(POLL_V1)
    run_id = project.h.start("poll")
    await project.h.run_due()
    assert (project.h.record(run_id).waiting_for or {})["kind"] == "poll"
    project.put(POLL_V2)
    _moved_once(project, "poll", run_id)
    await project.h.advance(timedelta(minutes=2))
    document = project.h.document(run_id)
    assert document["status"] == "succeeded"
    assert document["bindings"]["indexed"] == [
        {"check": {"n": 0, "by": "old"}}, {"check": {"n": 1, "by": "new"}},
        {"check": {"n": 2, "by": "new"}}]
    assert document["bindings"]["after"] == {"polled": True}


BRANCHES_V1 = """flow: branches
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
BRANCHES_V2 = BRANCHES_V1.replace("concurrency: 2", "concurrency: 2\n      as: vendor").replace(
    "{{ item }}", "{{ vendor }}") + "        - noted: { set: { for: \"{{ vendor }}\" } }\n"


async def test_for_each_branches_move_each_with_its_own_wait(project: Project) -> None:
    project.put(BRANCHES_V1)
    run_id = project.h.start("branches")
    await project.h.run_due()
    project.h.send("item.reply", {"item": "a"})
    await project.h.run_due()  # a's branch finishes, c's starts: b and c wait
    project.put(BRANCHES_V2)
    _moved_once(project, "branches", run_id)
    for item in ("c", "b"):
        assert project.h.send("item.reply", {"item": item}).runs == (run_id,)
        await project.h.run_due()
    document = project.h.document(run_id)
    assert document["status"] == "succeeded"
    replies = document["bindings"]["replies"]
    assert [reply.get("noted") for reply in replies] == [None, {"for": "b"}, {"for": "c"}]


REMIND_V1 = """flow: remind
steps:
  - reply:
      wait_for: order.reply
      match: { order: o-9 }
      timeout: 3h
      remind:
        every: 1h
        steps:
          - nudge: { log: { message: "still waitng" } }
"""
REMIND_V2 = REMIND_V1.replace("still waitng", "still waiting")
NO_REMIND = REMIND_V1.split("      remind:", maxsplit=1)[0]


def _logged(project: Project, run_id: str) -> list[str]:
    return [entry.data["message"] for entry in project.h.engine.store.history(run_id)
            if entry.kind == "log"]


async def test_a_wait_with_reminders_moves_and_the_next_reminder_is_the_fixed_one(
        project: Project) -> None:
    project.put(REMIND_V1)
    run_id = project.h.start("remind")
    await project.h.run_due()
    await project.h.advance(timedelta(minutes=90))
    project.put(REMIND_V2)
    _moved_once(project, "remind", run_id)
    await project.h.advance(timedelta(hours=2))
    assert _logged(project, run_id) == ["still waitng", "still waiting"]
    assert project.h.document(run_id)["bindings"]["reply"]["status"] == "timeout"


async def test_a_reminder_the_new_definition_drops_is_not_sent_and_the_deadline_holds(
        project: Project) -> None:
    project.put(REMIND_V1)
    run_id = project.h.start("remind")
    await project.h.run_due()
    project.put(NO_REMIND)
    _moved_once(project, "remind", run_id)
    assert project.h.record(run_id).due_at == START  # due at once: its waits change
    await project.h.run_due()
    record = project.h.record(run_id)
    assert record.due_at == START + timedelta(hours=3)
    assert "next_reminder" not in (record.waiting_for or {})
    await project.h.advance(timedelta(hours=4))
    assert _logged(project, run_id) == []
    assert project.h.document(run_id)["status"] == "succeeded"


HELD_V1 = """flow: held
hold:
  - after: "2026-06-01T12:00:00Z"
steps:
  - go: { set: { went: old } }
"""
HELD_V2 = HELD_V1.replace("went: old", "went: new")


async def test_a_held_run_moves_keeps_its_hold_and_starts_on_the_new_steps(
        project: Project) -> None:
    project.put(HELD_V1)
    run_id = project.h.start("held")
    await project.h.run_due()
    held = project.h.record(run_id)
    assert held.status is RunStatus.HELD
    project.put(HELD_V2)
    _moved_once(project, "held", run_id)
    assert project.h.record(run_id).due_at == held.due_at
    await project.h.advance(timedelta(hours=4))
    document = project.h.document(run_id)
    assert document["status"] == "succeeded"
    assert document["bindings"]["go"] == {"went": "new"}


CANNOT = [
    pytest.param(TIMER_V1.replace("  - nap: { wait: { for: 1h } }\n", ""),
                 "step 'nap' is not in the new definition", id="live-step-removed"),
    pytest.param(TIMER_V1.replace("nap: { wait: { for: 1h } }", "nap: { log: { message: x } }"),
                 "step 'nap' is a wait in the run's definition and an action in the new one",
                 id="construct-changed"),
    pytest.param(TIMER_V1.replace("- nap:", "- naps:"),
                 "step 'nap' is not in the new definition (did you mean 'naps'?)",
                 id="step-renamed"),
]


@pytest.mark.parametrize(("fixed", "reason"), CANNOT)
async def test_a_run_that_cannot_move_is_left_as_it_was_with_its_reason(
        project: Project, fixed: str, reason: str) -> None:
    project.put(TIMER_V1)
    run_id = project.h.start("timer", {"name": "ada"})
    await project.h.run_due()
    before = project.h.record(run_id)
    project.put(fixed)
    for dry_run in (True, False):
        report = project.migrate("timer", dry_run=dry_run)
        assert [(run.run_id, run.outcome, run.reasons) for run in report.runs] == [
            (run_id, "cannot move", (reason,))]
        assert not report.ok
    assert project.h.record(run_id) == before
    assert MIGRATED not in project.h.history_kinds(run_id)
    await project.h.advance(timedelta(hours=1))  # it goes on, on its own definition
    assert project.h.document(run_id)["bindings"]["done"]["how"] == "as it was"


async def test_a_run_whose_match_would_change_cannot_move(project: Project) -> None:
    project.put(EVENT_V1)
    run_id = project.h.start("event", {"order": "o-1"})
    await project.h.run_due()
    project.put(EVENT_V1.replace("\"{{ order }}\"", "\"order-{{ order }}\""))
    [run] = project.migrate("event").runs
    assert (run.outcome, run.reasons) == ("cannot move", (
        "step 'reply' waits for order.reply {\"order\": \"o-1\"}; the new definition would "
        "wait for order.reply {\"order\": \"order-o-1\"}",))
    assert project.h.send("order.reply", {"order": "o-1"}).runs == (run_id,)


async def test_a_run_that_woke_after_it_was_judged_is_skipped_not_corrupted(
        project: Project) -> None:
    two_naps = TIMER_V1.replace("  - done:", "  - again: { wait: { for: 1h } }\n  - done:")
    project.put(two_naps)
    run_id = project.h.start("timer", {"name": "ada"})
    await project.h.run_due()
    project.put(two_naps + "  - appended: { set: { also: true } }\n")
    store, catalog = project.h.engine.store, project.h.engine.catalog
    read = store.get_run(run_id)
    old, new = catalog.by_digest(read.flow_digest), catalog.remember(catalog.find("timer"))
    judged = judge(RunView(copy.deepcopy(read.state), store.journals([run_id]).get(run_id, []),
                           read.inputs), old, new, project.h.clock.now())
    assert judged.state is not None
    await project.h.advance(timedelta(hours=1))  # meanwhile it woke and waits at 'again'
    woke = project.h.record(run_id)
    plan = MovePlan(run_id, read.status, read.state, read.flow_digest, new.digest,
                    judged.state, HistoryEntry(project.h.clock.now(), MIGRATED, None, {}))
    assert store.move_run(plan, project.h.clock.now()) is None
    assert project.h.record(run_id) == woke
    await project.h.advance(timedelta(hours=1))
    document = project.h.document(run_id)
    assert document["status"] == "succeeded"
    assert "appended" not in document["bindings"]


async def test_a_run_moved_by_another_operator_first_is_skipped(project: Project) -> None:
    project.put(TIMER_V1)
    run_id = project.h.start("timer", {"name": "ada"})
    await project.h.run_due()
    project.put(TIMER_V2)
    read = project.h.engine.store.get_run(run_id)
    project.migrate("timer")
    plan = MovePlan(run_id, read.status, read.state, read.flow_digest, "other", read.state,
                    HistoryEntry(project.h.clock.now(), MIGRATED, None, {}))
    assert project.h.engine.store.move_run(plan, project.h.clock.now()) is None


async def test_several_runs_each_move_or_stay_on_their_own(project: Project) -> None:
    project.put(TIMER_V1)
    napping = project.h.start("timer", {"name": "ada"})
    await project.h.run_due()
    project.put(TIMER_V1.replace("  - done:", "  - later: { wait: { for: 1h } }\n  - done:"))
    later = project.h.start("timer", {"name": "bob"})
    await project.h.advance(timedelta(minutes=61))  # napping ends; 'later' naps, then waits
    pending = project.h.start("timer", {"name": "cy"})  # not started: not a candidate
    project.put(TIMER_V2)
    report = project.migrate("timer")
    outcomes = {run.run_id: run.outcome for run in report.runs}
    assert outcomes == {later: "cannot move"}
    assert project.h.record(napping).status is RunStatus.SUCCEEDED
    assert project.h.record(pending).status is RunStatus.PENDING


def _python_app() -> App:
    app = App()

    @app.flow("py-nap")
    async def py_nap(ctx: Context) -> Any:
        await ctx.wait("nap", "1h")

    return app


def test_a_python_flow_is_refused_pointing_to_patches(tmp_path: Path, store_url: str) -> None:
    with (Harness(tmp_path, start=START, store_url=store_url, app=_python_app()) as h,
          pytest.raises(InvalidRunRequest) as refused):
        h.engine.migrate_runs("py-nap", by="ops", dry_run=True)
    assert str(refused.value) == (
        "flow 'py-nap' is a Python flow: its runs replay the current code rather than keep a "
        "definition, so there is nothing to move; guard a change with ctx.patched(\"<id>\") "
        "so that the runs already waiting keep their path, and check them with tarry replay")


def test_a_target_of_another_flow_is_refused(project: Project, tmp_path: Path) -> None:
    project.put(TIMER_V1)
    other = tmp_path / "other.yaml"
    other.write_text(EVENT_V1, encoding="utf-8")
    with pytest.raises(InvalidRunRequest) as refused:
        project.h.engine.migrate_runs("timer", to=str(other), by="ops", dry_run=True)
    assert str(refused.value) == ("--to holds flow 'event', not 'timer': runs move only "
                                  "between definitions of their own flow")


NOTIFY = """flow: notify
steps:
  - nap: { wait: { for: 1h } }
  - tell: { notify: { text: hi } }
"""


async def test_a_run_whose_definition_no_longer_loads_cannot_move_and_says_why(
        tmp_path: Path, store_url: str) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        (folder / "flows").mkdir(parents=True)
    (first / "flows" / "notify.yaml").write_text(NOTIFY, encoding="utf-8")
    with Harness(first, start=START, store_url=store_url,
                 actions={"notify": lambda args, ctx: {}}) as h:
        run_id = h.start("notify")
        await h.run_due()
    fixed = NOTIFY.replace("notify: { text: hi }", "log: { message: hi }")
    (second / "flows" / "notify.yaml").write_text(fixed, encoding="utf-8")
    with Harness(second, start=START, store_url=store_url) as h:  # the action is gone
        [run] = h.engine.migrate_runs("notify", by="ops", dry_run=False).runs
        assert (run.run_id, run.outcome) == (run_id, "cannot move")
        [reason] = run.reasons
        assert reason.startswith("the run's definition cannot be read: <stored flow ")
        assert "notify" in reason
        assert h.record(run_id).status is RunStatus.WAITING
