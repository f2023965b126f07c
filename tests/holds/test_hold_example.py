"""examples/holds: the deploy held until its window opens and its ticket check says go.

The example folder is copied into ``tmp_path`` (so nothing is written into the repository)
and run on a virtual clock with its real check script, on both stores.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hold_support import NoJitter
from typer.testing import CliRunner

from tarry.cli import app
from tarry.config import load_settings
from tarry.model import RunStatus
from tarry.testing import Harness

pytestmark = pytest.mark.slow  # the real check script runs

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "holds"
START = datetime(2026, 8, 31, 12, 0, tzinfo=UTC)
WINDOW = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)



@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example, its check declared as the README says."""
    copy = tmp_path / "holds"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns(".tarry"))
    monkeypatch.setenv("TARRY_CHECKS", f"ticket:{copy}/checks/ticket-done.sh")
    return copy


@pytest.fixture
def harness(example: Path, store_url: str, tmp_path: Path) -> Iterator[Harness]:
    h = Harness(tmp_path / "h", start=START, store_url=store_url,
                project=load_settings(cwd=example))
    h.engine.holds.rng = NoJitter()
    yield h
    h.close()


def stamp(instant: datetime) -> str:
    return instant.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def start(harness: Harness, target: str) -> str:
    return harness.start("deploy", {"release": "v2.4.0"}, target=target)


def checks(harness: Harness, run: str) -> list[tuple[str, str]]:
    return [(e["at"], e["data"]["outcome"]) for e in harness.document(run)["history"]
            if e["kind"] == "hold.check"]


async def test_a_done_ticket_deploys_the_moment_the_window_opens(harness: Harness) -> None:
    run = start(harness, "acme/web#8")
    assert harness.record(run).due_at == WINDOW

    await harness.run_until(WINDOW - timedelta(milliseconds=1))
    assert harness.engine.holds.runner.spawned == 0
    await harness.run_until_idle()

    document = harness.document(run)
    assert (document["status"], document["exit"]) == ("succeeded", "deployed")
    assert checks(harness, run) == [(stamp(WINDOW), "go")]
    deploy = next(e for e in document["history"] if e["kind"] == "log")
    assert (deploy["at"], deploy["data"]) == (
        stamp(WINDOW), {"message": "deploying v2.4.0 to acme/web#8"})


async def test_a_ticket_in_review_holds_until_it_is_done(harness: Harness,
                                                         example: Path) -> None:
    run = start(harness, "acme/web#7")

    await harness.run_until(WINDOW + 2 * MINUTE + timedelta(seconds=30))
    (example / "tickets" / "7.status").write_text("Done\n")
    await harness.run_until_idle()

    assert checks(harness, run) == [(stamp(WINDOW + n * MINUTE), "not_yet") for n in range(3)] \
        + [(stamp(WINDOW + 3 * MINUTE), "go")]
    assert harness.record(run).exit == "deployed"


async def test_a_ticket_that_will_never_be_done_refuses_the_deploy(harness: Harness) -> None:
    run = start(harness, "acme/web#9")

    await harness.run_until_idle()

    record = harness.record(run)
    assert (record.status, record.reason) == (RunStatus.REFUSED, "hold-refused")
    assert checks(harness, run) == [(stamp(WINDOW), "never")]


async def test_a_target_without_a_ticket_is_refused_unanswerable(harness: Harness) -> None:
    run = start(harness, "acme/web")

    await harness.run_until_idle()

    record = harness.record(run)
    assert (record.status, record.reason) == (RunStatus.REFUSED, "hold-unanswerable")
    assert checks(harness, run) == [(stamp(WINDOW + n * MINUTE), "unknown") for n in range(5)]


def test_doctor_finds_the_example_in_order(example: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(example)

    result = CliRunner().invoke(app, ["doctor"])

    assert result.exit_code == 0, result.stdout
    assert f"ok: check 'ticket': {example}/checks/ticket-done.sh is executable" in result.stdout
    assert "error:" not in result.stdout
