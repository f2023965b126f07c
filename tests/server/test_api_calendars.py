"""A run held for a calendar's window, over HTTP on both stores: the API lists it by
``waiting_for=window`` and its document says the calendar and the opening on its clock; the
dashboard's runs page and run page say the same."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from server_support import Served, serve, start, status_becomes, write_project

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
SOME_OTHER_DAY = WEEKDAYS[(datetime.now(UTC).weekday() + 3) % 7]
"""A weekday three days from today's: the calendar is closed now, whatever the hour."""

FLOW = """\
flow: deploy
steps:
  - migrate:
      window: deploy
      log: { message: migrating }
"""


@pytest.fixture
def windowed(tmp_path: Path, store_url: str) -> Iterator[Served]:
    root = write_project(tmp_path / "project", store_url, flows={"deploy": FLOW})
    with (root / "tarry.toml").open("a", encoding="utf-8") as config:
        config.write(f'[calendars.deploy]\ntimezone = "Europe/Berlin"\n'
                     f'hours = {{ "{SOME_OTHER_DAY}" = "10:00-16:00" }}\n')
    with serve(root) as server:
        yield server


def test_the_api_and_the_dashboard_show_a_run_held_for_a_window(windowed: Served) -> None:
    with windowed.client() as client:
        run_id = start(client, "deploy")["id"]
        assert status_becomes(client, run_id, "waiting")
        listed = client.get("/v1/runs", params={"waiting_for": "window"}).json()["runs"]
        assert [run["id"] for run in listed] == [run_id]
        assert client.get("/v1/runs", params={"waiting_for": "timer"}).json()["runs"] == []
        waiting = client.get(f"/v1/runs/{run_id}").json()["waiting_for"]
        assert (waiting["kind"], waiting["step"], waiting["calendar"]) == (
            "window", "migrate", "deploy")
        assert re.fullmatch(r"\d{4}-\d\d-\d\d 10:00 Europe/Berlin", waiting["until_local"])
        page = client.get("/runs", params={"waiting_for": "window"}).text
        assert "window of calendar deploy at step &#39;migrate&#39;" in page
        run_page = client.get(f"/runs/{run_id}").text
        assert (f"({waiting['until_local']}, deploy hours); then starts step "
                "&#39;migrate&#39;") in run_page
