"""Human output: the one-line explanation of a wait, summaries, progress lines, tables."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from tarry.cli import render

REGISTERED = "2026-03-01T09:00:00.000Z"
UNTIL = "2026-03-03T09:00:00.000Z"


def doc(**fields: Any) -> dict[str, Any]:
    """A run document with quiet defaults."""
    base: dict[str, Any] = {
        "id": "r1", "flow": "cooling", "status": "waiting", "exit": None, "error": None,
        "reason": None, "target": None, "inputs": {}, "bindings": {}, "result": None,
        "waiting_for": None, "created_at": "2026-03-01T08:59:00.000Z",
        "updated_at": "2026-03-01T09:00:00.500Z", "history": [],
    }
    return base | fields


def entry(at: str, kind: str, step: str | None = None, /, **data: Any) -> dict[str, Any]:
    return {"at": at, "kind": kind, "step": step, "data": data}


TIMER = {"kind": "timer", "step": "cooling_off", "until": UNTIL, "event_type": None,
         "match": None}


def test_a_timer_wait_says_what_where_since_until_and_what_next() -> None:
    history = [entry("2026-03-01T08:59:00.000Z", "created"),
               entry(REGISTERED, "wait.registered", "cooling_off", kind="timer", until=UNTIL),
               entry("2026-03-01T09:00:00.400Z", "other", "cooling_off")]
    assert render.explain_wait(doc(waiting_for=TIMER, history=history)) == (
        f"waiting for timer at step 'cooling_off' since {REGISTERED} until {UNTIL}; "
        "then resumes at step 'cooling_off'")


def test_an_event_wait_names_the_event_type_and_the_match() -> None:
    waiting = {"kind": "event", "step": "approval", "until": UNTIL,
               "event_type": "slack.approval", "match": {"message": "17.1"}}
    history = [entry(REGISTERED, "wait.registered", "approval", kind="event")]
    assert render.explain_wait(doc(waiting_for=waiting, history=history)) == (
        "waiting for event 'slack.approval' matching message=\"17.1\" at step 'approval' "
        f"since {REGISTERED} until {UNTIL}; then resumes at step 'approval' with the event, "
        "or with status timeout at the deadline")


def test_a_poll_began_at_the_latest_entry_of_the_step_or_its_iterations() -> None:
    waiting = {"kind": "poll", "step": "indexed", "until": UNTIL}
    history = [entry("2026-03-01T08:00:00.000Z", "step.started", "indexed"),
               entry(REGISTERED, "step.completed", "indexed[0].check"),
               entry("2026-03-01T09:30:00.000Z", "step.completed", "indexed_other")]
    assert render.explain_wait(doc(waiting_for=waiting, history=history)) == (
        f"waiting to poll again at step 'indexed' since {REGISTERED} until {UNTIL}; "
        "then runs the next iteration of step 'indexed'")


def test_a_retry_began_when_the_retry_was_scheduled() -> None:
    waiting = {"kind": "retry", "step": "call", "until": UNTIL}
    history = [entry("2026-03-01T08:00:00.000Z", "step.started", "call"),
               entry(REGISTERED, "step.retrying", "call", attempt=1)]
    assert render.explain_wait(doc(waiting_for=waiting, history=history)) == (
        f"waiting to retry at step 'call' since {REGISTERED} until {UNTIL}; "
        "then runs step 'call' again")


def test_without_history_the_wait_began_at_the_last_update() -> None:
    explanation = render.explain_wait(doc(waiting_for=TIMER, history=None))
    assert explanation is not None
    assert " since 2026-03-01T09:00:00.500Z until " in explanation


def test_a_hold_has_no_step() -> None:
    waiting = {"kind": "hold", "step": None, "until": UNTIL}
    assert render.explain_wait(doc(status="held", waiting_for=waiting)) == (
        f"held before its first step since 2026-03-01T09:00:00.500Z until {UNTIL}; "
        "then checks its hold again")


def test_a_run_that_waits_for_nothing_has_no_explanation() -> None:
    assert render.explain_wait(doc(status="succeeded", exit="done")) is None


@pytest.mark.parametrize(("fields", "outcome"), [
    ({"status": "succeeded", "exit": "approved"}, "succeeded with exit 'approved'"),
    ({"status": "failed", "error": {"type": "failed", "message": "no luck", "step": "boom"}},
     "failed: step 'boom': failed: no luck"),
    ({"status": "failed", "error": {"type": "flow-error", "message": "gone", "step": None}},
     "failed: flow-error: gone"),
    ({"status": "failed"}, "failed: no error recorded"),
    ({"status": "refused", "reason": "hold-expired"}, "refused: hold-expired"),
    ({"status": "cancelled"}, "cancelled"),
    ({"status": "waiting"}, "waiting"),
])
def test_the_summary_names_what_ended_the_run(fields: dict[str, Any], outcome: str) -> None:
    assert render.summary_line(doc(**fields)) == f"run r1 (cooling): {outcome}"


def test_a_progress_line_is_instant_kind_step_and_data() -> None:
    line = render.progress_line(entry(REGISTERED, "wait.registered", "pause", kind="timer",
                                      until=UNTIL))
    assert line == f'{REGISTERED}  wait.registered   pause  kind="timer" until="{UNTIL}"'
    assert render.progress_line(entry(REGISTERED, "resumed")) == f"{REGISTERED}  resumed"


def test_a_short_wait_fits_a_table_cell() -> None:
    assert render.short_wait(TIMER) == f"timer until {UNTIL}"
    assert render.short_wait({"kind": "event", "event_type": "a.b", "until": UNTIL}) == (
        f"event a.b until {UNTIL}")
    assert render.short_wait(None) == ""


def printed(renderable: Any) -> str:
    out = io.StringIO()
    Console(file=out, width=200, markup=False, highlight=False).print(renderable)
    return out.getvalue()


def test_the_runs_table_has_a_row_per_run_with_its_ending_or_wait() -> None:
    text = printed(render.runs_table([
        doc(id="a1", waiting_for=TIMER),
        doc(id="b2", status="refused", reason="hold-expired"),
        doc(id="c3", status="failed", error={"type": "repeat-exhausted"}),
    ]))
    lines = text.splitlines()
    assert lines[0].split() == ["id", "flow", "status", "exit/reason", "waiting", "for",
                                "updated"]
    assert lines[2].split() == ["a1", "cooling", "waiting", "timer", "until", UNTIL,
                                "2026-03-01T09:00:00.500Z"]
    assert lines[3].split()[:4] == ["b2", "cooling", "refused", "hold-expired"]
    assert lines[4].split()[:4] == ["c3", "cooling", "failed", "repeat-exhausted"]


def test_data_with_markup_like_text_is_printed_as_is() -> None:
    text = printed(render.history_table([entry(REGISTERED, "log", "a", message="[bold]x")]))
    assert 'message="[bold]x"' in text
