"""The task inbox in a real browser (headless Chromium), against ``tarry serve``'s app with its
worker on a real socket, on each store: a person opens the inbox, fills a task's form, reads
the reason the server refused it, corrects it, completes the task and sees the run move on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_support import LIVE_WAIT_MS, settled, sign_in_tab
from server_support import Served, serve
from task_support import TOKENS, write_tasks_project

from browsers import Tab
from tarry.model import RunStatus


@pytest.fixture
def dashboard(tmp_path: Path, store_url: str) -> Iterator[Served]:
    """The asking flows served with three principals' tokens, as ``tarry serve`` runs them."""
    with serve(write_tasks_project(tmp_path / "project", store_url), TOKENS) as served:
        yield served


def test_a_person_answers_a_task_from_the_inbox_and_the_run_moves_on(
        tab: Tab, dashboard: Served) -> None:
    engine, page = dashboard.engine, tab.page
    run = engine.start("review", {"request": "R-7"})
    settled(engine, [run], RunStatus.WAITING)
    task = next(task for task in engine.tasks() if task.run_id == run.id)

    sign_in_tab(tab, dashboard, "alice-token", path="/tasks")
    row = page.locator(f"tr[data-task='{task.id}']")
    assert row.locator(".assign").inner_text() == "ops, alice"
    assert row.locator(".reminders").inner_text() == "0 sent"
    tab.screenshot("tasks-inbox")

    row.locator("a.task-title").click()
    page.wait_for_url(f"{dashboard.url}/tasks/{task.id}")
    page.fill("[name='data.note']", "fix the amount")
    page.fill("[name='data.amount']", "120")
    page.check("[name='data.urgent']")
    page.select_option("[name='data.channel']", label="chat")
    page.fill("[name='data.tags']", '["money",')
    page.press("[name='data.note']", "Enter")  # submits nothing: no outcome was chosen
    tab.screenshot("task-form")
    page.click("button[value=accept]")
    assert page.locator("#problems li").all_inner_texts() == [
        "data: tags: '[\"money\",' is not of type 'array'",
        "data: tags: not valid JSON: Expecting value (line 1, column 10)"]
    assert page.input_value("[name='data.note']") == "fix the amount"
    assert page.is_checked("[name='data.urgent']")
    refusals = [e for e in engine.store.history(run.id) if e.kind == "task.refused"]
    assert len(refusals) == 1  # the click's; Enter sent nothing
    tab.screenshot("task-refused")

    page.fill("[name='data.tags']", '["money"]')
    page.click("button[value=correct]")
    assert page.inner_text("#task-status").startswith("Completed as correct by alice at ")
    tab.screenshot("task-completed")

    page.click(f"a[href='/runs/{run.id}']")
    page.wait_for_selector(".run-head .s-succeeded", timeout=LIVE_WAIT_MS)
    assert '"outcome": "correct"' in page.inner_text("#bindings")
    assert page.locator("tr.k-task-completed").count() == 1
