"""The retention benchmark still runs end to end (tiny sizes; the figures themselves are not
judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "retention.py"
_TINY = ["--runs-per-day", "20", "--events-per-day", "10", "--days", "4", "--retain-days", "1",
         "--backlog", "100", "--steady-rate", "20", "--steady-seconds", "0.25"]


@pytest.mark.slow
def test_retention_benchmark_on_sqlite_writes_every_figure(tmp_path: Path) -> None:
    result_file = tmp_path / "retention.json"
    finished = subprocess.run([sys.executable, str(_SCRIPT), *_TINY, "--json",
                               str(result_file)],
                              capture_output=True, text=True, timeout=55, check=False)
    assert finished.returncode == 0, finished.stderr
    assert "size: last day ÷ first purge" in finished.stdout
    result = json.loads(result_file.read_text(encoding="utf-8"))
    size = result["size"]
    assert [day["day"] for day in size["days"]] == [1, 2, 3, 4]
    assert size["runs_created"] == 80
    assert size["runs_kept"] == 40  # today's and yesterday's: the rest expired
    assert [phase["purging"] for phase in result["lateness"]] == [False, True]
    assert all(phase["timers"] == 5 for phase in result["lateness"])
    assert result["lateness"][1]["expired_left_after"] == 0  # the worker purged the backlog
    assert [target["name"] for target in result["targets"]] == [
        "size last day ÷ first purge", "lateness p99 purging − not (ms)"]
