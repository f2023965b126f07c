"""The event benchmark still runs end to end (tiny sizes; the figures themselves are not judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backends import PostgresServer

_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "events.py"
_TINY = ["--waiting-small", "20", "--waiting-large", "60", "--rounds", "4",
         "--round-events", "5", "--limit-seconds", "0.02", "--latency-events", "5",
         "--latency-rate", "50"]


def _run_benchmark(result_file: Path, *options: str) -> dict[str, Any]:
    finished = subprocess.run([sys.executable, str(_SCRIPT), *_TINY, *options,
                               "--json", str(result_file)],
                              capture_output=True, text=True, timeout=50, check=False)
    assert finished.returncode == 0, finished.stderr
    assert "delivery: events/s" in finished.stdout
    result: dict[str, Any] = json.loads(result_file.read_text(encoding="utf-8"))
    return result


def _assert_every_figure(result: dict[str, Any]) -> None:
    assert len(result["limit"]["rounds"]) == 4
    for phase, waiting in (("small", 20), ("large", 60)):
        assert result[phase]["waiting_runs"] == waiting
        assert result[phase]["throughput"]["events"] == 20
        assert result[phase]["throughput"]["events_per_second"] > 0
        assert len(result[phase]["throughput"]["rounds"]) == 4
        assert result[phase]["latency"]["events"] == 5
        assert set(result[phase]["latency"]["ms"]) == {"p50", "p99", "max", "min"}
        assert result[phase]["latency"]["ms"]["min"] >= 0
    assert result["ratio_to_limit"] > 0
    assert result["independence"] > 0
    assert [target["name"] for target in result["targets"]] == [
        "delivery ÷ limit", "delivery large ÷ small waiting"]


@pytest.mark.slow
def test_events_benchmark_on_sqlite_writes_every_figure(tmp_path: Path) -> None:
    result = _run_benchmark(tmp_path / "events.json")

    _assert_every_figure(result)
    assert result["machine"]["store"] == "sqlite"


@pytest.mark.slow
@pytest.mark.postgres
def test_events_benchmark_on_postgres_writes_every_figure_and_drops_its_databases(
        tmp_path: Path, postgres_server: PostgresServer) -> None:
    before = postgres_server.databases("tarry_bench_events")  # others' runs may own some
    result = _run_benchmark(tmp_path / "events.json", "--store", postgres_server.url)

    _assert_every_figure(result)
    assert result["machine"]["store"] == "postgresql"
    assert postgres_server.databases("tarry_bench_events") <= before
