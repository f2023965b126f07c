"""The I/O benchmarks still run end to end (tiny sizes; the figures themselves are not judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backends import PostgresServer

_BENCH = Path(__file__).resolve().parents[2] / "bench"


def _run(script: str, result_file: Path, *options: str) -> dict[str, Any]:
    finished = subprocess.run([sys.executable, str(_BENCH / script), *options,
                               "--json", str(result_file)],
                              capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 0, finished.stderr
    result: dict[str, Any] = json.loads(result_file.read_text(encoding="utf-8"))
    return result


@pytest.mark.slow
def test_the_loop_lag_benchmark_writes_every_figure(tmp_path: Path) -> None:
    result = _run("loop_lag.py", tmp_path / "lag.json", "--burst", "20", "--due-seconds",
                  "1", "--idle-seconds", "0.2", "--limit-seconds", "0.05")
    assert result["burst"]["lag"]["samples"] > 0
    assert set(result["burst"]["lag"]) == {"samples", "p50_ms", "p99_ms", "max_ms"}
    assert result["burst"]["wakes_per_second"] > 0
    assert result["limit"]["per_second"] > 0
    assert [target["name"] for target in result["targets"]] == [
        "lag p99 added by the burst (ms)"]


@pytest.mark.slow
@pytest.mark.postgres
def test_the_round_trip_benchmark_writes_every_figure(
        tmp_path: Path, postgres_server: PostgresServer) -> None:
    result = _run("roundtrips.py", tmp_path / "trips.json", "--store", postgres_server.url,
                  "--repeat", "1", "--idle-seconds", "0.2", "--limit-seconds", "0.05")
    trips = result["round_trips"]
    assert set(trips) == {"start", "wake", "send", "resume", "idle_per_second"}
    assert all(trips[name] > 0 for name in ("start", "wake", "send", "resume"))
    assert [target["name"] for target in result["targets"]] == [
        "round trips per wake", "round trips per send"]
