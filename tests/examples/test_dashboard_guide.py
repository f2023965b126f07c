"""docs/dashboard.md says what the dashboard does: its example lines are the dashboard's own
words, and its numbers are the code's."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from markdown_blocks import ROOT, Document
from tarry.engine.explain import explain_wait
from tarry.errors import TaskForbidden
from tarry.server.dashboard.present import wait_line
from tarry.server.dashboard.runs import PAGE_SIZE, WAIT_CHOICES
from tarry.server.dashboard.session import COOKIE, MAX_AGE
from tarry.server.dashboard.taskform import read_answer, task_form
from tarry.server.dashboard.tasks import COMPLETED_SHOWN, OPEN_SHOWN, VIEWS
from tarry.server.dashboard.timeline import MAX_LANES

DOC = Document("docs/dashboard.md", __file__)
GUIDE = DOC.text
ROWS, EXPLANATION = DOC.blocks("text")
SCRIPT = (ROOT / "src" / "tarry" / "server" / "dashboard" / "static" / "dashboard.js").read_text()
NOW = datetime(2026, 9, 1, 9, 0, 48, tzinfo=UTC)

EVENT_WAIT = {"kind": "event", "step": "approval", "until": "2026-09-02T09:00:00.000Z",
              "since": "2026-09-01T09:00:00.000Z", "event_type": "deal.approved",
              "match": {"deal": "D1"},
              "alternatives": [{"event_type": "deal.approved", "match": {"deal": "D1"}}]}
HOLD_WAIT = {"kind": "hold", "step": None, "until": "2026-09-01T09:04:00.000Z",
             "conditions": [{"after": "2026-09-01T09:00:00.000Z"},
                            {"check": "ticket", "clear": False}]}


def test_the_example_rows_are_what_the_runs_page_says() -> None:
    assert ROWS.splitlines() == [wait_line(EVENT_WAIT, datetime(2026, 9, 1, 9, 0, 20, tzinfo=UTC)),
                    wait_line(HOLD_WAIT, NOW)]


def test_the_example_explanation_is_the_engines() -> None:
    assert EXPLANATION.strip() == explain_wait({"status": "waiting", "waiting_for": EVENT_WAIT,
                                        "updated_at": "2026-09-01T09:00:00.000Z"})


def test_the_numbers_and_names_are_the_codes() -> None:
    assert "fifty to a page" in GUIDE
    assert PAGE_SIZE == 50
    assert "for twelve hours" in GUIDE
    assert MAX_AGE == 12 * 3600
    assert "more than forty waits" in GUIDE
    assert MAX_LANES == 40
    assert f"(`{COOKIE}`)" in GUIDE
    assert "every 5 seconds" in GUIDE
    assert "var PERIOD_MS = 5000;" in SCRIPT
    kinds = re.search(r"a kind of wait: (.*?); or an", GUIDE)
    assert kinds is not None
    named = re.sub(r"\([^)]*\)", "", kinds.group(1))  # leave out the explanations
    assert re.findall(r"`(\w+)`", named) == list(WAIT_CHOICES)


def test_the_task_inbox_says_what_the_code_lists_and_refuses() -> None:
    assert f"newest {OPEN_SHOWN} open tasks are listed" in GUIDE
    assert f"**Completed tasks**, the newest {COMPLETED_SHOWN}" in GUIDE
    assert [view.capitalize() for view in VIEWS] == re.findall(
        r"^\| \*\*(\w+)\*\*", GUIDE, re.MULTILINE)
    forbidden = TaskForbidden("3f2c9a1e0b7d4c3a", "bob", ("ops", "alice"))
    assert f"`{forbidden}`" in GUIDE
    form = task_form({"type": "object", "properties": {"tags": {"type": "array"}}})
    (not_json,) = read_answer(form, {"data.tags": '["a",'}).not_json
    assert f"`{not_json}`" in GUIDE
