"""The rules that decide whether a waiting YAML run can move to a new definition
(``tarry.engine.moves``), pure: a state, its journal and two definitions in, a judgement out.
Each rule is shown with a run that moves and one that cannot, with the exact reason."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tarry.engine.moves import RunView, judge
from tarry.language.loader import parse_flow
from tarry.language.model import Flow
from tarry.model import JournalEntry

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def flow(body: str, head: str = "") -> Flow:
    return parse_flow(f"flow: f\n{head}steps:\n{body}", "flow.yaml", actions=frozenset())


def frame(at: int, cur: dict[str, Any] | None = None, b: dict[str, Any] | None = None,
          **more: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"at": at, "phase": "steps", "b": b or {}, **more}
    if cur is not None:
        found["cur"] = cur
    return found


def run(root: dict[str, Any], **view: Any) -> RunView:
    return RunView({"version": 3, "started_at": "2026-06-01T09:00:00.000Z", "root": root},
                   **view)


TIMER = "  - greet: { set: { text: hi } }\n  - nap: { wait: { for: 1h } }\n"
NAPPING = frame(1, {"until": "2026-06-01T13:00:00.000Z", "since": "2026-06-01T12:00:00.000Z"},
                {"greet": {"text": "hi"}})


# -- rule 1: every live step is in the new definition, at the same path ----------------------

def test_a_run_moves_when_its_live_step_is_kept_and_steps_are_added_after_it() -> None:
    judged = judge(run(NAPPING), flow(TIMER),
                   flow(TIMER + "  - done: { set: { text: fixed } }\n"), NOW)
    assert judged.movable
    assert judged.reasons == ()
    assert judged.state is not None
    assert judged.state["root"] == NAPPING
    assert not judged.wake


def test_a_live_step_that_moved_in_its_scope_is_found_by_its_id() -> None:
    new = flow("  - greet: { set: { text: hi } }\n  - note: { log: { message: x } }\n"
               "  - nap: { wait: { for: 2h } }\n")
    judged = judge(run(NAPPING), flow(TIMER), new, NOW)
    assert judged.movable
    assert judged.state is not None
    assert judged.state["root"]["at"] == 2
    assert judged.state["root"]["cur"] == NAPPING["cur"]  # the deadline is kept


def test_a_live_step_removed_cannot_move() -> None:
    judged = judge(run(NAPPING), flow(TIMER),
                   flow("  - greet: { set: { text: hi } }\n  - done: { log: { message: x } }\n"),
                   NOW)
    assert judged.reasons == ("step 'nap' is not in the new definition",)
    assert judged.state is None
    assert not judged.movable


def test_a_renamed_live_step_cannot_move_and_the_close_name_is_suggested() -> None:
    judged = judge(run(NAPPING), flow(TIMER),
                   flow("  - greet: { set: { text: hi } }\n  - naps: { wait: { for: 1h } }\n"),
                   NOW)
    assert judged.reasons == ("step 'nap' is not in the new definition (did you mean "
                              "'naps'?)",)


def test_a_step_moved_into_another_scope_cannot_move() -> None:
    new = flow("  - greet: { set: { text: hi } }\n  - later:\n      steps:\n"
               "        - nap: { wait: { for: 1h } }\n")
    assert judge(run(NAPPING), flow(TIMER), new, NOW).reasons == (
        "step 'nap' is not in the new definition",)


def test_a_recover_step_in_progress_must_stay_a_recover_step() -> None:
    old = parse_flow("flow: f\nsteps:\n  - call: { fail: boom }\nrecover:\n"
                     "  - pause: { wait: { for: 1h } }\n", "flow.yaml", actions=frozenset())
    recovering = frame(0, {"until": "2026-06-01T13:00:00.000Z"}, phase="recover",
                       error={"step": "call", "type": "failed", "message": "boom"})
    kept = parse_flow("flow: f\nsteps:\n  - call: { fail: boom }\nrecover:\n"
                      "  - note: { log: { message: x } }\n  - pause: { wait: { for: 1h } }\n",
                      "flow.yaml", actions=frozenset())
    moved = judge(run(recovering), old, kept, NOW)
    assert moved.movable
    assert moved.state is not None
    assert moved.state["root"]["at"] == 1
    assert judge(run(recovering), old, flow("  - call: { fail: boom }\n"), NOW).reasons == (
        "recover step 'pause' is not in the new definition",)


def test_a_held_run_has_nothing_in_progress_and_always_moves() -> None:
    held = RunView({"version": 3, "hold": {"conditions": []}})
    judged = judge(held, flow(TIMER), flow("  - other: { log: { message: x } }\n"), NOW)
    assert judged.movable
    assert judged.state == {"version": 3, "hold": {"conditions": []}}


# -- rule 2: the same construct --------------------------------------------------------------

def test_a_live_step_whose_construct_changed_cannot_move() -> None:
    new = flow("  - greet: { set: { text: hi } }\n  - nap: { log: { message: x } }\n")
    assert judge(run(NAPPING), flow(TIMER), new, NOW).reasons == (
        "step 'nap' is a wait in the run's definition and an action in the new one",)


def test_a_group_in_progress_is_walked_down_to_its_live_step() -> None:
    old = flow("  - g:\n      steps:\n        - inner: { wait: { for: 1h } }\n")
    state = frame(0, {"frame": frame(0, {"until": "2026-06-01T13:00:00.000Z"})})
    new = flow("  - g:\n      steps:\n        - inner:\n            wait_for: x.y\n"
               "            match: { k: v }\n            timeout: 1h\n")
    assert judge(run(state), old, new, NOW).reasons == (
        "step 'g.inner' is a wait in the run's definition and a wait_for in the new one",)


# -- rule 3: waiting for the same thing ------------------------------------------------------

EVENT = ("  - ask: { set: { ts: '17.1' } }\n"
         "  - approval:\n      wait_for: slack.approval\n"
         "      match: { message: \"{{ ask.ts }}\" }\n      timeout: 1d\n")
WAITING = frame(1, {"until": "2026-06-02T12:00:00.000Z", "since": "2026-06-01T12:00:00.000Z",
                    "alternatives": [{"type": "slack.approval", "match": {"message": "17.1"}}],
                    "reminders": 0},
                {"ask": {"ts": "17.1"}})


def test_an_event_wait_moves_when_the_new_match_gives_the_same_values() -> None:
    new = flow(EVENT.replace("{{ ask.ts }}", "{{ ask['ts'] }}").replace("1d", "3d")
               + "  - done: { set: { ok: true } }\n")
    judged = judge(run(WAITING), flow(EVENT), new, NOW)
    assert judged.movable
    assert judged.state is not None
    assert judged.state["root"]["cur"] == WAITING["cur"]


def test_an_event_wait_whose_match_values_would_differ_cannot_move() -> None:
    new = flow(EVENT.replace("{{ ask.ts }}", "ts-{{ ask.ts }}"))
    assert judge(run(WAITING), flow(EVENT), new, NOW).reasons == (
        "step 'approval' waits for slack.approval {\"message\": \"17.1\"}; the new definition "
        "would wait for slack.approval {\"message\": \"ts-17.1\"}",)


def test_an_event_wait_for_another_event_type_cannot_move() -> None:
    new = flow(EVENT.replace("wait_for: slack.approval", "wait_for: email.reply"))
    assert judge(run(WAITING), flow(EVENT), new, NOW).reasons == (
        "step 'approval' waits for slack.approval {\"message\": \"17.1\"}; the new definition "
        "would wait for email.reply {\"message\": \"17.1\"}",)


def test_an_event_wait_whose_new_match_cannot_be_computed_cannot_move() -> None:
    new = flow(EVENT.replace("{{ ask.ts }}", "{{ ask.channel }}"))
    [reason] = judge(run(WAITING), flow(EVENT), new, NOW).reasons
    assert reason.startswith("step 'approval': the new definition's match cannot be computed "
                             "for this run (")
    assert "channel" in reason


def test_the_bindings_a_new_match_reads_may_come_from_the_journal() -> None:
    in_row = frame(1, WAITING["cur"])
    journal = [JournalEntry("", "ask", {"ts": "17.1"})]
    assert judge(run(in_row, journal=journal), flow(EVENT), flow(EVENT), NOW).movable


ASK = ("  - review:\n      ask:\n        title: Check it\n        outcomes: [accept, reject]\n"
       "        form: { type: object }\n      timeout: 3d\n")
ASKING = frame(0, {"task": {"id": "t1", "title": "Check it", "details": None, "assign": [],
                            "form": {"type": "object"}, "outcomes": ["accept", "reject"],
                            "created_at": "2026-06-01T12:00:00.000Z"},
                   "until": "2026-06-04T12:00:00.000Z", "since": "2026-06-01T12:00:00.000Z",
                   "reminders": 0})


def test_an_open_task_moves_when_the_new_ask_offers_the_same_outcomes_and_form() -> None:
    new = flow(ASK.replace("Check it", "Check it, please") + "  - after: { log: { message: "
               "\"{{ review.outcome }}\" } }\n")
    assert judge(run(ASKING), flow(ASK), new, NOW).movable


def test_an_open_task_whose_outcomes_or_form_changed_cannot_move() -> None:
    new = flow(ASK.replace("[accept, reject]", "[accept, correct]")
               .replace("{ type: object }", "{ type: object, required: [note] }"))
    assert judge(run(ASKING), flow(ASK), new, NOW).reasons == (
        "step 'review' has a task open with the outcomes accept, reject; the new "
        "definition's are accept, correct",
        "step 'review' has a task open with another form than the new definition's")


POLL = ("  - indexed:\n      repeat: { every: 30s, max: 5, until: \"{{ check.n >= 9 }}\" }\n"
        "      steps:\n        - check: { set: { n: \"{{ loop.index }}\" } }\n")
POLLING = frame(0, {"repeat": "indexed", "i": 3, "done": {}, "frame": frame(0),
                    "next_at": "2026-06-01T12:00:30.000Z", "since": "2026-06-01T12:00:00.000Z"})


def test_a_repeat_moves_when_its_new_max_allows_the_iteration_in_progress() -> None:
    assert judge(run(POLLING), flow(POLL), flow(POLL.replace("max: 5", "max: 4")), NOW).movable


def test_a_repeat_whose_new_max_is_below_the_iteration_in_progress_cannot_move() -> None:
    assert judge(run(POLLING), flow(POLL), flow(POLL.replace("max: 5", "max: 3")),
                 NOW).reasons == (
        "step 'indexed' is in its iteration 4, beyond the new definition's max of 3",)


def test_a_repeat_paused_before_its_next_iteration_runs_the_new_steps_in_it() -> None:
    new = flow(POLL.replace("- check: { set: { n: \"{{ loop.index }}\" } }",
                            "- probe: { set: { n: \"{{ loop.index }}\" } }")
               .replace("check.n", "probe.n"))
    judged = judge(run(POLLING), flow(POLL), new, NOW)
    assert judged.movable
    assert judged.state is not None
    assert judged.state["root"]["cur"]["frame"] == frame(0)


def test_an_input_read_ahead_is_reported_once_at_its_outermost_reader() -> None:
    old = flow("  - g:\n      steps:\n        - inner: { wait: { for: 1h } }\n")
    state = frame(0, {"frame": frame(0, {"until": "2026-06-01T13:00:00.000Z"})})
    new = flow("  - g:\n      steps:\n        - inner: { wait: { for: 1h } }\n"
               "        - say: { log: { message: \"{{ region }}\" } }\n",
               "inputs:\n  region: { type: string }\n")
    assert judge(run(state), old, new, NOW).reasons == (
        "step 'g' reads input 'region', which this run was started without",)


def test_a_live_step_inside_a_repeat_iteration_is_named_with_its_index() -> None:
    inside = frame(0, {"repeat": "indexed", "i": 2, "done": {}, "frame": frame(
        0, {"until": "2026-06-01T13:00:00.000Z"})})
    old = flow(POLL.replace("check: { set: { n: \"{{ loop.index }}\" } }",
                            "check: { wait: { for: 1h } }").replace("check.n >= 9", "false"))
    new = flow(POLL.replace("check: { set: { n: \"{{ loop.index }}\" } }",
                            "probe: { wait: { for: 1h } }").replace("check.n >= 9", "false"))
    assert judge(run(inside), old, new, NOW).reasons == (
        "step 'indexed[2].check' is not in the new definition",)


BRANCHES = ("  - replies:\n      for_each: \"{{ ['a', 'b', 'c'] }}\"\n      concurrency: 2\n"
            "      steps:\n        - reply:\n            wait_for: item.reply\n"
            "            match: { item: \"{{ item }}\" }\n            timeout: 1d\n")


def _branch(item: str) -> dict[str, Any]:
    return frame(0, {"until": "2026-06-02T12:00:00.000Z", "reminders": 0,
                     "alternatives": [{"type": "item.reply", "match": {"item": item}}]})


FANNED = frame(0, {"each": "replies", "next": 3, "n": 3, "failures": 0, "done": {},
                   "live": {"1": _branch("b"), "2": _branch("c")}})
ITEMS = [JournalEntry("items", "replies", ["a", "b", "c"])]


def test_for_each_branches_move_when_each_live_step_is_kept() -> None:
    new = flow(BRANCHES + "        - noted: { set: { ok: true } }\n")
    judged = judge(run(FANNED, journal=ITEMS), flow(BRANCHES), new, NOW)
    assert judged.movable
    assert judged.state is not None
    assert "items" not in judged.state["root"]["cur"]


def test_each_live_branch_whose_step_is_gone_is_a_reason_of_its_own() -> None:
    new = flow(BRANCHES.replace("- reply:", "- answer:"))
    assert judge(run(FANNED, journal=ITEMS), flow(BRANCHES), new, NOW).reasons == (
        "step 'replies[1].reply' is not in the new definition",
        "step 'replies[2].reply' is not in the new definition")


def test_a_branch_whose_match_would_use_another_item_name_still_matches() -> None:
    new = flow(BRANCHES.replace("concurrency: 2", "concurrency: 2\n      as: vendor")
               .replace("{{ item }}", "{{ vendor }}"))
    assert judge(run(FANNED, journal=ITEMS), flow(BRANCHES), new, NOW).movable


REMIND = ("  - reply:\n      wait_for: order.reply\n      match: { order: o-9 }\n"
          "      timeout: 3h\n      remind:\n        every: 1h\n        steps:\n"
          "          - nudge: { log: { message: still waitng } }\n")
NO_REMIND = REMIND.split("      remind:", maxsplit=1)[0]
SCHEDULED = frame(0, {"until": "2026-06-01T15:00:00.000Z", "reminders": 1,
                      "remind_at": "2026-06-01T13:00:00.000Z",
                      "alternatives": [{"type": "order.reply", "match": {"order": "o-9"}}]})


def test_a_scheduled_reminder_is_kept_when_the_new_wait_reminds_too() -> None:
    judged = judge(run(SCHEDULED), flow(REMIND),
                   flow(REMIND.replace("still waitng", "still waiting")), NOW)
    assert judged.movable
    assert not judged.wake
    assert judged.state is not None
    assert judged.state["root"]["cur"] == SCHEDULED["cur"]


def test_a_scheduled_reminder_is_dropped_when_the_new_wait_has_none_and_the_run_wakes() -> None:
    new = flow(NO_REMIND)
    judged = judge(run(SCHEDULED), flow(REMIND), new, NOW)
    assert judged.movable
    assert judged.wake
    assert judged.state is not None
    assert "remind_at" not in judged.state["root"]["cur"]


def test_a_scheduled_reminder_is_dropped_when_the_new_max_was_already_sent() -> None:
    new = flow(REMIND.replace("every: 1h", "every: 1h\n        max: 1"))
    judged = judge(run(SCHEDULED), flow(REMIND), new, NOW)
    assert judged.wake
    assert judged.state is not None
    assert "remind_at" not in judged.state["root"]["cur"]


def test_a_wait_that_gets_a_reminder_schedules_it_every_after_the_move() -> None:
    plain = frame(0, {**{k: v for k, v in SCHEDULED["cur"].items() if k != "remind_at"},
                      "reminders": 0})
    judged = judge(run(plain), flow(NO_REMIND), flow(REMIND), NOW)
    assert judged.movable
    assert judged.wake
    assert judged.state is not None
    assert judged.state["root"]["cur"]["remind_at"] == "2026-06-01T13:00:00.000Z"


SENDING = frame(0, {**SCHEDULED["cur"], "remind_frame": frame(0, {"attempt": 1})})


def test_a_reminder_in_progress_needs_its_steps_in_the_new_wait() -> None:
    assert judge(run(SENDING), flow(REMIND), flow(REMIND.replace("- nudge:", "- poke:")),
                 NOW).reasons == ("step 'reply.remind.nudge' is not in the new definition",)
    assert judge(run(SENDING), flow(REMIND), flow(NO_REMIND),
                 NOW).reasons == ("step 'reply' is sending a reminder, and the new "
                                  "definition's step has no remind",)
    assert judge(run(SENDING), flow(REMIND), flow(REMIND), NOW).movable


# -- rule 4: the bindings the steps ahead name exist -----------------------------------------

def test_a_step_ahead_naming_a_step_put_before_the_live_one_cannot_move() -> None:
    new = flow("  - greet: { set: { text: hi } }\n  - extra: { set: { x: 1 } }\n"
               "  - nap: { wait: { for: 1h } }\n"
               "  - done: { log: { message: \"{{ extra.x }}\" } }\n")
    assert judge(run(NAPPING), flow(TIMER), new, NOW).reasons == (
        "step 'done' reads 'extra', which this run has not bound: the new definition puts "
        "step 'extra' before where the run is",)


def test_a_step_put_before_the_live_one_that_nothing_names_is_no_obstacle() -> None:
    new = flow("  - greet: { set: { text: hi } }\n  - extra: { set: { x: 1 } }\n"
               "  - nap: { wait: { for: 1h } }\n"
               "  - done: { log: { message: \"{{ greet.text }}\" } }\n")
    assert judge(run(NAPPING), flow(TIMER), new, NOW).movable


def test_a_step_ahead_reading_an_input_the_run_was_started_without_cannot_move() -> None:
    new = flow(TIMER + "  - done: { log: { message: \"{{ region }}\" } }\n",
               "inputs:\n  region: { type: string, default: eu }\n")
    assert judge(run(NAPPING), flow(TIMER), new, NOW).reasons == (
        "step 'done' reads input 'region', which this run was started without",)
    assert judge(run(NAPPING, inputs={"region": "us"}), flow(TIMER), new, NOW).movable


def test_every_reason_is_listed_once() -> None:
    new = flow("  - extra: { set: { x: 1 } }\n  - naps: { wait: { for: 1h } }\n"
               "  - done: { log: { message: \"{{ extra.x }} {{ region }}\" } }\n",
               "inputs:\n  region: { type: string }\n")
    assert judge(run(NAPPING), flow(TIMER), new, NOW).reasons == (
        "step 'nap' is not in the new definition (did you mean 'naps'?)",)
