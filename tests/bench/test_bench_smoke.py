"""The timer benchmark still runs end to end (tiny sizes; the figures themselves are not judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backends import PostgresServer

_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "timers.py"
_TINY = ["--burst", "10", "--steady-rate", "20", "--steady-seconds", "0.25",
         "--rss-small", "5", "--rss-large", "15", "--idle-seconds", "0.2",
         "--limit-seconds", "0.05", "--limit-rounds", "1"]


def _run_benchmark(result_file: Path, *options: str) -> dict[str, Any]:
    finished = subprocess.run([sys.executable, str(_SCRIPT), *_TINY, *options,
                               "--json", str(result_file)],
                              capture_output=True, text=True, timeout=50, check=False)
    assert finished.returncode == 0, finished.stderr
    assert "burst: wakes/s" in finished.stdout
    result: dict[str, Any] = json.loads(result_file.read_text(encoding="utf-8"))
    return result


def _assert_every_figure(result: dict[str, Any]) -> None:
    assert result["limit"]["per_second"] > 0
    assert result["burst"]["runs"] == 10
    assert result["burst"]["ratio_to_limit"] > 0
    assert result["steady"]["runs"] == 5
    assert set(result["steady"]["lateness_ms"]) == {"p50", "p99", "max", "min"}
    assert [point["waiting_runs"] for point in result["rss"]["points"]] == [5, 15]
    assert result["rss"]["store_bytes_per_waiting_run"] > 0
    assert [target["name"] for target in result["targets"]] == [
        "burst wakes/s ÷ limit", "steady lateness p99 (ms)", "idle worker RSS large ÷ small"]


@pytest.mark.slow
def test_timers_benchmark_on_sqlite_writes_every_figure(tmp_path: Path) -> None:
    result = _run_benchmark(tmp_path / "timers.json")

    _assert_every_figure(result)
    assert result["machine"]["store"] == "sqlite"


@pytest.mark.slow
@pytest.mark.postgres
def test_timers_benchmark_on_postgres_writes_every_figure_and_drops_its_databases(
        tmp_path: Path, postgres_server: PostgresServer) -> None:
    before = postgres_server.databases("tarry_bench_timers")  # others' runs may own some
    result = _run_benchmark(tmp_path / "timers.json", "--store", postgres_server.url)

    _assert_every_figure(result)
    assert result["machine"]["store"] == "postgresql"
    assert postgres_server.databases("tarry_bench_timers") <= before
