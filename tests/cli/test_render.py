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
    assert render.short_wait({"kind": "event", "until": UNTIL, "alternatives": [
        {"event_type": "email.reply", "match": {}}, {"event_type": "portal.reply",
                                                      "match": {}}]}) == (
        f"event email.reply | portal.reply until {UNTIL}")
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


def test_show_prints_how_long_each_step_took_and_waited() -> None:
    steps = [{"step": "call", "status": "completed", "started_at": REGISTERED,
              "ended_at": "2026-03-01T09:00:08.000Z", "duration_ms": 8000, "waited_ms": None},
             {"step": "nap", "status": "completed", "started_at": REGISTERED,
              "ended_at": UNTIL, "duration_ms": 172_800_250, "waited_ms": 172_800_000},
             {"step": "ask", "status": "waiting", "started_at": UNTIL, "ended_at": None,
              "duration_ms": None, "waited_ms": None}]
    out = io.StringIO()
    render.show_run(Console(file=out, width=120), doc(steps=steps))
    table = out.getvalue()[out.getvalue().index("steps"):out.getvalue().index("history")]
    rows = [line.split() for line in table.splitlines()[3:] if line.strip()]
    assert rows == [["call", "completed", REGISTERED, "8s"],
                    ["nap", "completed", REGISTERED, "2d250ms", "2d"],
                    ["ask", "waiting", UNTIL]]


def test_show_prints_a_python_runs_journal() -> None:
    journal = [{"name": "fetch", "kind": "step", "status": "completed", "attempt": 1,
                "started_at": REGISTERED, "ended_at": UNTIL, "result": {"ok": 1}, "error": None},
               {"name": "refuse", "kind": "step", "status": "failed", "attempt": 1,
                "started_at": UNTIL, "ended_at": UNTIL, "result": None,
                "error": {"type": "ValueError", "message": "no"}},
               {"name": "nap", "kind": "wait", "status": "waiting", "attempt": None,
                "started_at": UNTIL, "ended_at": None, "result": None, "error": None}]
    out = io.StringIO()
    render.show_run(Console(file=out, width=160), doc(journal=journal))
    text = out.getvalue()
    rows = [line.split() for line in text[text.index("journal"):text.index("history")
                                          ].splitlines()[3:] if line.strip()]
    assert rows == [["fetch", "step", "completed", "1", REGISTERED, UNTIL, '{"ok":', "1}"],
                    ["refuse", "step", "failed", "1", UNTIL, UNTIL, '{"type":', '"ValueError",',
                     '"message":', '"no"}'],
                    ["nap", "wait", "waiting", UNTIL]]
