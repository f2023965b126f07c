"""``tarry show`` of a Python run: its journal as a table, and in ``--json`` with the
environment's secrets masked and values past ``TARRY_SHOWN_BYTES`` truncated."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tarry import App, Context
from tarry.testing import Harness

from .conftest import Project

SECRET = "tok-0123456789abcdef"


@pytest.fixture
async def python_run(project: Project, monkeypatch: pytest.MonkeyPatch) -> str:
    app = App()

    @app.flow("py")
    async def py(ctx: Context) -> None:
        await ctx.step("fetch", lambda: {"auth": SECRET, "pad": "x" * 50})

    with Harness(project.root, start=datetime(2026, 3, 1, tzinfo=UTC), app=app,
                 store_url=f"sqlite:///{project.root / 'state' / 'tarry.db'}") as harness:
        run_id = harness.start("py")
        await harness.run_until_idle()
    monkeypatch.setenv("TARRY_API_TOKEN", SECRET)
    return run_id


def test_show_json_masks_secrets_and_truncates_long_values(project: Project,
                                                           python_run: str,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    (fetch,) = project.json("show", python_run)["journal"]
    assert fetch["result"] == {"auth": "***", "pad": "x" * 50}
    monkeypatch.setenv("TARRY_SHOWN_BYTES", "20")
    (fetch,) = project.json("show", python_run)["journal"]
    assert fetch["result"] == {"$truncated": {"bytes": 73, "shown": '{"auth":"***","pad":'}}


def test_show_prints_the_journal_as_a_table(project: Project, python_run: str) -> None:
    text = project.tarry("show", python_run).stdout
    journal = text[text.index("journal"):text.index("history")]
    assert "fetch" in journal
    assert "completed" in journal
    assert SECRET not in text
