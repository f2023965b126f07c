"""``tarry purge`` and the doctor's retention warning, on both stores: runs that ended long
ago (made on a virtual clock in 2020) are counted, deleted, and gone; live ones stay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from markdown_blocks import Document
from tarry.clock import SystemClock
from tarry.config import Retention, load_settings
from tarry.holds.doctor import Finding, Level, diagnose
from tarry.testing import Harness

from .conftest import Project

GUIDE = Document("docs/operating.md", __file__)
RETENTION = GUIDE.block("toml", after="## Retention")

LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)
QUICK = "flow: quick\nsteps:\n  - a: { set: { x: 1 } }\n"
NAP = "flow: nap\nsteps:\n  - nap: { wait: { for: 3650d } }\n"


@pytest.fixture
async def aged(project: Project, store_url: str) -> Project:
    """The project on the test's store with three runs that ended in 2020 and one that has
    waited since then."""
    (project.root / "tarry.toml").write_text(f'[tarry]\ndatabase = "{store_url}"\n')
    with Harness(project.root, start=LONG_AGO, store_url=store_url) as harness:
        for _ in range(3):
            harness.start(harness.flow(QUICK))
        harness.start(harness.flow(NAP))
        await harness.run_due()
    return project


def test_purge_counts_then_deletes_what_expired(aged: Project,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TARRY_RETENTION_RUNS", "30d")
    counted = aged.tarry("purge", "--dry-run")
    assert (counted.exit_code, counted.stdout) == (
        0, "would delete 3 ended runs and 0 settled events\n")
    assert len(aged.json("runs")) == 4  # a dry run deletes nothing
    deleted = aged.tarry("purge")
    assert (deleted.exit_code, deleted.stdout) == (
        0, "deleted 3 ended runs and 0 settled events\n")
    assert [doc["flow"] for doc in aged.json("runs")] == ["nap"]  # the live run stays
    assert aged.json("purge") == {"runs": 0, "events": 0, "dry_run": False}


def test_purge_older_than_works_with_retention_off(aged: Project) -> None:
    assert aged.json("purge", "--older-than", "3650d", "--dry-run") == {
        "runs": 0, "events": 0, "dry_run": True}
    assert aged.json("purge", "--older-than", "1d") == {"runs": 3, "events": 0,
                                                         "dry_run": False}


def test_purge_with_retention_off_says_how_to_turn_it_on(aged: Project) -> None:
    result = aged.tarry("purge")
    assert result.exit_code == 1
    assert result.stderr == ('error: retention is off, so nothing expires: set [retention] '
                             'runs and events in tarry.toml (such as runs = "30d"), or give '
                             "--older-than\n")


@pytest.mark.parametrize(("value", "message"), [
    ("soon", "'soon' is not a duration"),
    ("0s", "expected a duration longer than zero, got \"0s\""),
    ("6h", "keep at least a day (a start's Idempotency-Key and an event's id are remembered "
           "that long), got \"6h\""),
])
def test_a_bad_older_than_is_a_usage_error(aged: Project, value: str, message: str) -> None:
    result = aged.tarry("purge", "--older-than", value)
    assert result.exit_code == 2
    assert "Invalid value for '--older-than': " + message in result.stderr


def _retention_warnings(findings: list[Finding]) -> list[str]:
    return [f.message for f in findings if f.topic == "retention" and f.level is Level.WARNING]


def test_doctor_warns_of_many_ended_runs_with_retention_off(aged: Project,
                                                            store_url: str) -> None:
    now = SystemClock().now()
    env = {"TARRY_DATABASE": store_url}
    assert _retention_warnings(diagnose(now, cwd=aged.root, env=env, ended_runs_warning=2)) == [
        'the store holds 3 ended runs and retention is off, so it only grows: set [retention] '
        'runs = "30d" (and events = "7d") in tarry.toml, or TARRY_RETENTION_RUNS, and the '
        "workers delete what expired"]
    assert _retention_warnings(diagnose(now, cwd=aged.root, env=env)) == []  # a million
    on = {**env, "TARRY_RETENTION_RUNS": "30d"}
    assert _retention_warnings(diagnose(now, cwd=aged.root, env=on, ended_runs_warning=2)) == []


def test_the_guides_retention_table_turns_retention_on(aged: Project) -> None:
    with (aged.root / "tarry.toml").open("a") as config:
        config.write(RETENTION)
    assert load_settings(aged.root, {}).retention == Retention(runs=timedelta(days=30),
                                                               events=timedelta(days=7))
    assert aged.json("purge", "--dry-run") == {"runs": 3, "events": 0, "dry_run": True}
