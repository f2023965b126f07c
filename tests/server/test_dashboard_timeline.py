"""A run's history read into the spans and marks of its timeline, and placed on a drawing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tarry.clock import iso
from tarry.server.dashboard.timeline import (
    HANDLED_KINDS,
    MAX_LANES,
    PLOT_LEFT,
    PLOT_RIGHT,
    layout,
    timeline,
)

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)


def at(hours: float) -> str:
    return iso(T0 + timedelta(hours=hours))


def entry(hours: float, entry_kind: str, step: str | None = None, /,
          **data: Any) -> dict[str, Any]:
    return {"at": at(hours), "kind": entry_kind, "step": step, "data": data}


def run(history: list[dict[str, Any]], *, status: str = "waiting",
        waiting_for: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": "r1", "status": status, "created_at": at(0), "history": history,
            "waiting_for": waiting_for}


APPROVAL = [
    entry(0, "created"), entry(0, "started"), entry(0, "step.started", "approval"),
    entry(0, "wait.registered", "approval", kind="event", until=at(24),
          alternatives=[{"type": "slack.approval", "match": {"message": "1"}}]),
    entry(6, "reminder.sent", "approval", count=1),
    entry(7, "event.rejected", "approval", event_id="e1", type="slack.approval"),
    entry(12, "reminder.sent", "approval", count=2),
    entry(13, "event.received", "approval", event_id="e2", type="slack.approval"),
    entry(13, "step.completed", "approval"), entry(13, "succeeded", exit="approved"),
]


def test_a_wait_is_a_span_from_its_start_to_its_deadline_with_what_happened_on_it() -> None:
    line = timeline(run(APPROVAL, status="succeeded"), T0 + timedelta(hours=30))

    [lane] = line.lanes
    [span] = lane.spans
    assert (lane.name, span.kind, span.label) == ("approval", "event", "event slack.approval")
    assert (span.start, span.deadline, span.end, span.outcome) == (
        T0, T0 + timedelta(hours=24), T0 + timedelta(hours=13), "received")
    assert [(m.kind, m.label) for m in lane.marks] == [
        ("reminder", "reminder 1"), ("rejected", "rejected slack.approval e1 (accept)"),
        ("reminder", "reminder 2"), ("event", "received slack.approval e2")]
    assert line.now is None  # an ended run draws no present
    assert line.stop == T0 + timedelta(hours=24)  # the deadline, though it was not reached


def test_a_wait_still_open_reaches_to_now_and_the_axis_to_its_deadline() -> None:
    history = [entry(0, "created"), entry(0, "wait.registered", "nap", kind="timer",
                                          until=at(48))]
    now = T0 + timedelta(hours=10)
    line = timeline(run(history), now)

    [span] = line.lanes[0].spans
    assert (span.kind, span.end, span.outcome) == ("timer", None, "")
    assert (line.now, line.stop) == (now, T0 + timedelta(hours=48))
    [drawn] = layout(line).lanes[0].spans
    assert drawn.x == PLOT_LEFT
    assert drawn.planned == PLOT_RIGHT - PLOT_LEFT
    assert drawn.waited == round((PLOT_RIGHT - PLOT_LEFT) * 10 / 48, 1)
    assert layout(line).now_x == drawn.x + drawn.waited
    assert drawn.deadline_label == "wakes Sep 03 09:00:00"


def test_a_timeout_ends_the_wait_at_its_deadline() -> None:
    history = [entry(0, "created"),
               entry(0, "wait.registered", "approval", kind="event", until=at(1)),
               entry(1, "wait.timeout", "approval", until=at(1)),
               entry(1, "step.completed", "approval")]
    [span] = timeline(run(history), T0 + timedelta(hours=2)).lanes[0].spans
    assert (span.end, span.outcome) == (T0 + timedelta(hours=1), "timeout")


def test_each_pause_of_a_poll_is_a_span_ended_by_the_next_iteration() -> None:
    history = [entry(0, "created"), entry(0, "step.started", "indexed[0].check"),
               entry(0, "wait.registered", "indexed", kind="poll", until=at(1)),
               entry(1, "step.started", "indexed[1].check"),
               entry(1, "wait.registered", "indexed", kind="poll", until=at(2))]
    lanes = timeline(run(history), T0 + timedelta(hours=1.5)).lanes

    assert [lane.name for lane in lanes] == ["indexed"]  # the iterations' steps do not wait
    first, second = lanes[0].spans
    assert (first.end, first.outcome) == (T0 + timedelta(hours=1), "polled")
    assert (second.start, second.end) == (T0 + timedelta(hours=1), None)


def test_a_held_run_has_a_hold_span_to_its_expiry_with_its_checks_and_next_check() -> None:
    history = [entry(0, "created"),
               entry(1, "hold.check", check="ticket", outcome="not_yet", exit=3),
               entry(2, "hold.check", check="ticket", outcome="unknown", exit=1)]
    waiting = {"kind": "hold", "until": at(2.25), "since": at(1), "expires": at(25),
               "conditions": [{"check": "ticket", "clear": False}]}
    [lane] = timeline(run(history, status="held", waiting_for=waiting),
                      T0 + timedelta(hours=2.1)).lanes

    [span] = lane.spans
    assert (lane.name, span.kind, span.start, span.deadline, span.end) == (
        "hold", "hold", T0, T0 + timedelta(hours=25), None)
    assert [(m.kind, m.label) for m in lane.marks] == [
        ("check", "check ticket: not yet"), ("check", "check ticket: unknown"),
        ("next-check", "next check")]


def test_a_cleared_hold_ends_where_the_first_step_starts() -> None:
    history = [entry(0, "created"), entry(3, "hold.check", check="ticket", outcome="go"),
               entry(3, "hold.cleared"), entry(3, "started")]
    [span] = timeline(run(history, status="running"), T0 + timedelta(hours=4)).lanes[0].spans
    assert (span.end, span.outcome, span.deadline) == (T0 + timedelta(hours=3), "cleared", None)


def test_cancelling_ends_every_open_wait() -> None:
    history = [entry(0, "created"),
               entry(0, "wait.registered", "a", kind="event", until=at(5)),
               entry(0, "wait.registered", "b", kind="timer", until=at(9)),
               entry(2, "cancelled", by="alice")]
    lanes = timeline(run(history, status="cancelled"), T0 + timedelta(hours=3)).lanes
    assert [(s.end, s.outcome) for lane in lanes for s in lane.spans] == [
        (T0 + timedelta(hours=2), "cancelled")] * 2


def test_a_retry_delay_is_a_span_until_the_retry() -> None:
    history = [entry(0, "created"),
               entry(0, "step.retrying", "call", attempt=1, until=at(0.5),
                     error={"type": "action", "message": "503"}),
               entry(0.5, "step.completed", "call")]
    [span] = timeline(run(history, status="running"), T0 + timedelta(hours=1)).lanes[0].spans
    assert (span.kind, span.label, span.deadline, span.outcome) == (
        "retry", "retry, attempt 1", T0 + timedelta(hours=0.5), "done")


def test_a_run_that_never_waited_has_no_lanes() -> None:
    line = timeline(run([entry(0, "created"), entry(0, "succeeded", exit="completed")],
                        status="succeeded"), T0)
    assert line.lanes == []
    assert line.stop == T0 + timedelta(seconds=1)


def test_the_drawing_caps_its_lanes_and_says_how_many_it_left_out() -> None:
    history = [entry(0, "created")] + [
        entry(0, "wait.registered", f"items[{i}].reply", kind="event", until=at(1))
        for i in range(MAX_LANES + 5)]
    drawing = layout(timeline(run(history), T0))
    assert (len(drawing.lanes), drawing.left_out) == (MAX_LANES, 5)


def test_ticks_fall_on_round_instants_within_the_plot() -> None:
    history = [entry(0, "created"), entry(0, "wait.registered", "nap", kind="timer",
                                          until=at(24))]
    ticks = layout(timeline(run(history, status="succeeded"), T0)).ticks
    assert [label for _, label in ticks] == ["09:00", "12:00", "15:00", "18:00", "21:00",
                                             "Sep 02", "03:00", "06:00", "09:00"]
    assert all(PLOT_LEFT <= x <= PLOT_RIGHT for x, _ in ticks)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30)
                     | st.just("2026-09-01T10:00:00.000Z"),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)
_ENTRIES = st.builds(
    lambda hours, kind, step, data: entry(hours, kind, step, **data),
    st.floats(min_value=0, max_value=100),
    st.sampled_from([*HANDLED_KINDS, "log", "resumed", "step.started"]),
    st.none() | st.sampled_from(["a", "a[0].b", "hold"]),
    st.dictionaries(st.sampled_from(["kind", "until", "alternatives", "type", "attempt",
                                     "count", "outcome", "check", "event_id"]), _JSON,
                    max_size=4))


@given(st.lists(_ENTRIES, max_size=12), st.sampled_from(["waiting", "held", "succeeded"]),
       st.none() | st.dictionaries(st.sampled_from(["kind", "until", "expires"]), _JSON))
def test_any_history_draws_without_failing(history: list[dict[str, Any]], status: str,
                                           waiting: dict[str, Any] | None) -> None:
    history.sort(key=lambda e: e["at"])
    drawing = layout(timeline(run(history, status=status, waiting_for=waiting), T0))
    assert all(PLOT_LEFT <= s.x <= PLOT_RIGHT for lane in drawing.lanes for s in lane.spans)
