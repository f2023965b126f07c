"""``[calendars.NAME]`` in tarry.toml: business calendars, their holidays (dates and an
iCalendar file), and every refusal, each naming the table and key."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from tarry.config import CONFIG_FILE, Settings, load_settings
from tarry.errors import ConfigError

ICS = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//tarry tests//EN
BEGIN:VEVENT
UID:christmas@tarry
DTSTART;VALUE=DATE:20261225
DTEND;VALUE=DATE:20261227
SUMMARY:Christmas
RRULE:FREQ=YEARLY
EXDATE;VALUE=DATE:20301225
END:VEVENT
BEGIN:VEVENT
UID:retreat@tarry
DTSTART;VALUE=DATE:20270310
SUMMARY:Team retreat
END:VEVENT
BEGIN:VEVENT
UID:meeting@tarry
DTSTART:20270311T100000Z
DTEND:20270311T110000Z
SUMMARY:A meeting, not a holiday
END:VEVENT
END:VCALENDAR
"""

SUPPORT = """
[calendars.support]
timezone = "Europe/Berlin"
hours = { "mon-fri" = "09:00-17:00", "sat" = "10:00-14:00" }
holidays = ["2026-12-24", 2026-12-31]
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()


def load(root: Path, text: str) -> Settings:
    (root / CONFIG_FILE).write_text(text, encoding="utf-8")
    return load_settings(cwd=root, env={})


def refusal(root: Path, text: str) -> str:
    with pytest.raises(ConfigError) as refused:
        load(root, text)
    prefix = f"{root / CONFIG_FILE}: "
    message = str(refused.value)
    assert message.startswith(prefix)
    return message.removeprefix(prefix)


def test_a_calendar_is_read_with_its_zone_hours_and_holidays(root: Path) -> None:
    support = load(root, SUPPORT).calendars["support"]
    assert support.zone.key == "Europe/Berlin"
    assert support.hours[0] == ((540, 1020),)
    assert support.hours[5] == ((600, 840),)
    assert support.hours[6] == ()
    assert support.holidays == {date(2026, 12, 24), date(2026, 12, 31)}
    assert support.is_open(datetime(2026, 12, 5, 9, 30, tzinfo=UTC))  # Saturday 10:30 CET


def test_without_calendars_there_are_none(root: Path) -> None:
    assert load(root, "[tarry]\n").calendars == {}


def test_holidays_come_from_an_icalendar_file_with_yearly_rules(root: Path) -> None:
    (root / "holidays.ics").write_text(ICS, encoding="utf-8")
    support = load(root, SUPPORT + 'holidays_file = "holidays.ics"\n').calendars["support"]
    for year in (2026, 2027, 2040, 2100):
        assert {date(year, 12, 25), date(year, 12, 26)} <= support.holidays
    # EXDATE removes that year's occurrence, both of its days
    assert not {date(2030, 12, 25), date(2030, 12, 26)} & support.holidays
    assert date(2027, 3, 10) in support.holidays
    assert date(2027, 3, 11) not in support.holidays  # an event with a time is no holiday
    assert date(2026, 12, 24) in support.holidays  # the listed dates too


@pytest.mark.parametrize(("text", "message"), [
    ('[calendars.support]\ntimezon = "Europe/Berlin"\nhours = { "mon" = "09:00-17:00" }\n',
     "[calendars.support] unknown key 'timezon' (did you mean 'timezone'?)"),
    ('[calendars.support]\nholiday = []\n',
     "[calendars.support] unknown key 'holiday' (did you mean 'holidays'?)"),
    ('[calendars.support]\nhours = { "mon" = "09:00-17:00" }\n',
     "[calendars.support] missing 'timezone' (an IANA zone such as \"Europe/Berlin\": hours "
     "are read on its clock)"),
    ('[calendars.support]\ntimezone = "Europe/Berlin"\n',
     "[calendars.support] missing 'hours' (such as { \"mon-fri\" = \"09:00-17:00\" })"),
    ('[calendars.support]\ntimezone = "Europe/Berlln"\nhours = { "mon" = "09:00-17:00" }\n',
     "[calendars.support] timezone: unknown timezone \"Europe/Berlln\" (did you mean "
     "'Europe/Berlin'?)"),
    ('[calendars.support]\ntimezone = "Europe/Berlin"\nhours = { "mon" = "09:00-25:00" }\n',
     "[calendars.support] hours: 'mon': '25:00' in '09:00-25:00' is not a time of day "
     "(00:00 to 24:00)"),
    ('[calendars.support]\ntimezone = "Europe/Berlin"\nhours = { "mon" = "17:00-09:00" }\n',
     "[calendars.support] hours: 'mon': '17:00-09:00' closes before it opens (a range runs "
     "within one day; write 22:00-24:00 and 00:00-06:00 on the next day)"),
    ('[calendars.support]\ntimezone = "Europe/Berlin"\n'
     'hours = { "mon-fri" = "09:00-17:00", "fri" = "16:00-18:00" }\n',
     "[calendars.support] hours: 09:00-17:00 and 16:00-18:00 overlap in the hours of fri"),
    ('[calendars.support]\ntimezone = "Europe/Berlin"\nhours = { "weekdays" = "09:00-17:00" }\n',
     "[calendars.support] hours: 'weekdays': 'weekdays' is not a weekday or range of weekdays "
     "(use mon, tue, wed, thu, fri, sat, sun, e.g. mon-fri or sat)"),
    ('[calendars.support]\ntimezone = "Europe/Berlin"\nhours = "09:00-17:00"\n',
     "[calendars.support] hours: expected a table of weekdays to hours such as "
     "{ \"mon-fri\" = \"09:00-17:00\", \"sat\" = \"10:00-14:00\" }, got \"09:00-17:00\""),
    ('[calendars.support]\ntimezone = "Europe/Berlin"\nhours = {}\n',
     "[calendars.support]: calendar 'support' is never open (no opening hours)"),
    ('[calendars.support]\ntimezone = "Europe/Berlin"\nhours = { "mon" = "09:00-17:00" }\n'
     'holidays = ["2026-02-31"]\n',
     "[calendars.support] holidays[0]: \"2026-02-31\" is not a real date (YYYY-MM-DD, such as "
     "2026-12-25)"),
    ('[calendars.support]\ntimezone = "Europe/Berlin"\nhours = { "mon" = "09:00-17:00" }\n'
     'holidays = "2026-12-25"\n',
     "[calendars.support] holidays: expected an array of dates such as [\"2026-12-25\"], got "
     "\"2026-12-25\""),
    ('[calendars.Support]\ntimezone = "Europe/Berlin"\nhours = { "mon" = "09:00-17:00" }\n',
     "[calendars.Support]: a calendar's name must match [a-z0-9][a-z0-9_.-]*"),
    ('[calendars]\nsupport = "Europe/Berlin"\n',
     "[calendars.support]: expected a table such as [calendars.support] with timezone and "
     "hours, got \"Europe/Berlin\""),
    ('[calendar.support]\ntimezone = "Europe/Berlin"\n',
     "unknown table [calendar] (did you mean 'calendars'?)"),
])
def test_mistakes_are_refused_naming_the_table_and_key(root: Path, text: str,
                                                       message: str) -> None:
    assert refusal(root, text) == message


BASE = '[calendars.support]\ntimezone = "Europe/Berlin"\nhours = { "mon" = "09:00-17:00" }\n'


def test_a_missing_holidays_file_is_refused(root: Path) -> None:
    assert refusal(root, BASE + 'holidays_file = "nope.ics"\n') == (
        f"[calendars.support] holidays_file: cannot read {root / 'nope.ics'} "
        "(No such file or directory)")


@pytest.mark.parametrize(("content", "reason"), [
    ("not a calendar at all", "not an iCalendar file ("),
    ("BEGIN:VEVENT\nUID:1\nDTSTART;VALUE=DATE:20261225\nEND:VEVENT\n",
     "not an iCalendar file (no VCALENDAR)"),
    ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20261225\nRRULE:FREQ=HOURLY\n"
     "END:VEVENT\nEND:VCALENDAR\n",
     "the RRULE 'FREQ=HOURLY' of an all-day event must repeat daily, weekly, monthly or "
     "yearly"),
])
def test_a_malformed_holidays_file_is_refused(root: Path, content: str, reason: str) -> None:
    (root / "holidays.ics").write_text(content, encoding="utf-8")
    message = refusal(root, BASE + 'holidays_file = "holidays.ics"\n')
    assert message.startswith(f"[calendars.support] holidays_file: {root / 'holidays.ics'}: "
                              f"{reason}")
