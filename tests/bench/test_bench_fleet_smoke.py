"""The fleet benchmark still runs end to end (tiny sizes; the figures themselves are not judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from backends import PostgresServer

_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "fleet.py"
_TINY = ["--burst", "10", "--repeat", "1", "--limit-seconds", "0.05", "--limit-rounds", "1",
         "--fleets", "1", "2", "--profile"]


@pytest.mark.slow
@pytest.mark.postgres
def test_fleet_benchmark_writes_every_figure_and_drops_its_databases(
        tmp_path: Path, postgres_server: PostgresServer) -> None:
    before = postgres_server.databases("tarry_bench_fleet")  # others' runs may own some
    result_file = tmp_path / "fleet.json"
    finished = subprocess.run([sys.executable, str(_SCRIPT), *_TINY, "--store",
                               postgres_server.url, "--json", str(result_file)],
                              capture_output=True, text=True, timeout=55, check=False)

    assert finished.returncode == 0, finished.stderr
    assert "2 worker(s): wakes/s" in finished.stdout
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert result["limit"]["per_second"] > 0
    assert [fleet["workers"] for fleet in result["fleets"]] == [1, 2]
    for fleet in result["fleets"]:
        assert fleet["runs"] == 10
        assert fleet["ratio_to_limit"] > 0
        assert len(fleet["wakes_per_second_rounds"]) == len(fleet["rounds"]) == 1
        assert fleet["executions"] == {"runs_not_succeeded_once": 0, "runs_not_woken_once": 0,
                                       "runs": 10}
        assert set(fleet["cpu_ms_per_wake"]) == {"workers", "postgres_sessions"}
        assert all(each["pg_stat_activity"]["samples"] > 0 for each in fleet["rounds"])
    assert result["profile"]["by_own"]
    assert all(entry["ours"] for entry in result["profile"]["tarry_by_cumulative"])
    assert [target["name"] for target in result["targets"]] == [
        "wakes/s, 2 workers ÷ 1 worker", "runs not executed exactly once"]
    assert postgres_server.databases("tarry_bench_fleet") <= before


def test_fleet_benchmark_refuses_a_fleet_without_its_one_worker_baseline() -> None:
    finished = subprocess.run([sys.executable, str(_SCRIPT), "--fleets", "2", "4"],
                              capture_output=True, text=True, timeout=30, check=False)

    assert finished.returncode == 2
    assert "--fleets must start with 1 (the baseline) and name positive sizes" in finished.stderr
