"""docs/flows.md, "Business time and windows": its calendars load, its flows run on them
as it says (on both stores), and the explanation it quotes is the one tarry gives."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from markdown_blocks import Document
from tarry.config import CONFIG_FILE, Settings, load_settings
from tarry.engine.explain import explain_wait
from tarry.language.calendars import Calendar
from tarry.testing import Harness

GUIDE = Document("docs/flows.md", __file__)
SECTION = "## Business time and windows"
CONFIG = GUIDE.block("toml", after=SECTION)
ICS = GUIDE.block("text", after="### Declaring a calendar")
SLA, DEPLOY = GUIDE.blocks("yaml", after=SECTION)
EXPLANATION = GUIDE.block("text", after="### An SLA in business hours").strip()
BERLIN = ZoneInfo("Europe/Berlin")


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=BERLIN)


def shown(instant: datetime) -> str:
    return instant.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def settings_with(folder: Path, extra: str = "") -> Settings:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / CONFIG_FILE).write_text(CONFIG + extra, encoding="utf-8")
    return load_settings(folder, env={})


@pytest.fixture
def calendars(tmp_path: Path) -> dict[str, Calendar]:
    return dict(settings_with(tmp_path / "project").calendars)


def harness_at(tmp_path: Path, store_url: str, start: datetime,
               calendars: dict[str, Calendar]) -> Harness:
    return Harness(tmp_path, start=start.astimezone(UTC), store_url=store_url,
                   calendars=calendars)


def test_the_calendars_load_as_the_table_says(calendars: dict[str, Calendar]) -> None:
    support, deploy = calendars["support"], calendars["deploy"]
    assert support.zone.key == deploy.zone.key == "Europe/Berlin"
    assert support.hours[0] == ((540, 1020),)
    assert support.holidays == {date(2026, 12, 24), date(2026, 12, 25), date(2026, 12, 28)}
    assert deploy.hours[1] == ((600, 720), (780, 960))
    assert deploy.hours[0] == deploy.hours[4] == ()


def test_the_holidays_file_closes_every_christmas(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "holidays.ics").write_text(ICS, encoding="utf-8")
    settings = settings_with(folder, 'holidays_file = "holidays.ics"\n')
    deploy = settings.calendars["deploy"]
    for year in (2026, 2030, 2100):
        assert {date(year, 12, 24), date(year, 12, 25), date(year, 12, 26)} <= deploy.holidays
    assert date(2026, 12, 27) not in deploy.holidays


@pytest.fixture
def sla(tmp_path: Path, store_url: str,
        calendars: dict[str, Calendar]) -> Iterator[Harness]:
    h = harness_at(tmp_path, store_url, at("2026-12-23T15:00"), calendars)
    yield h
    h.close()


async def test_the_sla_is_due_two_business_days_later_with_reminders(sla: Harness) -> None:
    run_id = sla.start(sla.flow(SLA, "flows/support-ticket.yaml"), {"ticket": "T-7"})
    await sla.run_due()
    document = sla.document(run_id)
    assert explain_wait(document) == EXPLANATION
    assert sla.task(run_id, "answer").request.title == (
        f"Answer ticket T-7 by {shown(at('2026-12-30T15:00')).replace('.000', '')}")
    await sla.run_until_idle()
    document = sla.document(run_id)
    assert document["exit"] == "sla-breached"
    assert [entry["at"] for entry in document["history"] if entry["kind"] == "reminder.sent"] \
        == [shown(at("2026-12-29T11:00")), shown(at("2026-12-29T15:00")),
            shown(at("2026-12-30T11:00"))]
    assert [entry["at"] for entry in document["history"] if entry["kind"] == "wait.timeout"] \
        == [shown(at("2026-12-30T15:00"))]


async def test_the_deploy_waits_at_migrate_for_the_window(tmp_path: Path, store_url: str,
                                                          calendars: dict[str, Calendar]
                                                          ) -> None:
    with harness_at(tmp_path, store_url, at("2026-12-18T15:00"), calendars) as h:
        run_id = h.start(h.flow(DEPLOY, "flows/deploy.yaml"), {"version": "1.2"})
        await h.run_due()
        record = h.record(run_id)
        assert record.status.value == "waiting"
        assert record.waiting_for is not None
        assert (record.waiting_for["kind"], record.waiting_for["step"]) == ("window", "migrate")
        assert record.due_at == at("2026-12-22T10:00")  # Tuesday
        assert [run.id for run in h.engine.runs(waiting_for="window")] == [run_id]
        await h.run_until_idle()
        document = h.document(run_id)
        assert document["status"] == "succeeded"
        started = {entry["step"]: entry["at"] for entry in document["history"]
                   if entry["kind"] == "step.started"}
        assert started["migrate"] == shown(at("2026-12-22T10:00"))
