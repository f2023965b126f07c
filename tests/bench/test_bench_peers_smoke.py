"""The peers benchmark's harness still runs end to end, with tarry alone (no peer installed,
no network; tiny sizes; the figures themselves are not judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

_PEERS = Path(__file__).resolve().parents[2] / "bench" / "peers"
_TINY = ["--rounds", "1", "--timer-items", "6", "--timer-rate", "50", "--delay-s", "0.3",
         "--burst-items", "8", "--start-items", "5", "--batch", "4", "--batches", "2",
         "--waiting", "4", "--events", "3", "--event-rate", "30", "--small", "2",
         "--large", "6", "--idle-s", "0.1", "--limit-s", "0.05", "--timeout-s", "20"]
_FIGURES = {
    "starts": {"single_per_second", "batched_per_second"},
    "timers": {"lateness_p50_ms", "lateness_p99_ms", "lateness_max_ms", "submits_per_second",
               "worker_peak_rss_mib"},
    "burst:8": {"wakes_per_second", "first_wake_late_ms", "last_wake_late_ms",
                "setup_slack_s", "worker_peak_rss_mib"},
    "events": {"resume_p50_ms", "resume_p99_ms", "resume_max_ms", "send_p50_ms"},
    "suspension": {"rss_small_mib", "rss_large_mib", "rss_ratio", "bytes_per_waiting_item"},
}


def _run(tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    result_file = tmp_path / "peers.json"
    finished = subprocess.run(
        [sys.executable, str(_PEERS / "run.py"), "--systems", "tarry-sqlite", *_TINY,
         "--no-plots", "--scratch", str(tmp_path / "scratch"), "--json", str(result_file)],
        capture_output=True, text=True, timeout=50, check=False)
    assert finished.returncode == 0, finished.stderr
    return finished, json.loads(result_file.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_the_peers_harness_measures_every_workload_of_tarry_and_writes_the_json(
        tmp_path: Path) -> None:
    finished, result = _run(tmp_path)

    assert {key: set(by_system["tarry-sqlite"]["figures"])
            for key, by_system in result["summary"].items()} == _FIGURES
    figures = {name: value for by_system in result["summary"].values()
               for name, value in by_system["tarry-sqlite"]["figures"].items()}
    assert None not in figures.values()
    assert all(figures[name] > 0 for name in (
        "single_per_second", "batched_per_second", "submits_per_second", "wakes_per_second",
        "resume_p50_ms", "worker_peak_rss_mib", "rss_small_mib"))
    assert [m["request"]["workload"] for m in result["measurements"]] == [
        "starts", "timers", "burst", "events", "suspension"]
    assert len(result["measurements"][1]["reply"]["result"]["lateness_ms"]) == 6
    assert set(result["limit"]) == {"sqlite"}
    assert len(result["machine"]["load_average"]) == 3
    assert result["skipped"] == {}
    assert result["plots"] == {"skipped": "--no-plots"}
    assert result["environments"] == {}  # nothing was installed
    assert result["redis_started_by_run"] is False
    assert "wakes/s" in finished.stdout
    assert "send→resume" in finished.stdout


@pytest.mark.slow
def test_a_system_whose_store_is_unreachable_is_reported_skipped_with_the_reason(
        tmp_path: Path) -> None:
    result_file = tmp_path / "peers.json"
    nobody = "postgresql://postgres@127.0.0.1:1/postgres"  # nothing listens on port 1

    finished = subprocess.run(
        [sys.executable, str(_PEERS / "run.py"), "--systems", "tarry-postgresql",
         "--workloads", "starts", "--rounds", "1", "--postgres", nobody, "--no-plots",
         "--scratch", str(tmp_path / "scratch"), "--json", str(result_file)],
        capture_output=True, text=True, timeout=50, check=False)

    assert finished.returncode == 0, finished.stderr
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert list(result["skipped"]) == ["tarry-postgresql"]
    assert result["skipped"]["tarry-postgresql"].startswith(
        f"PostgreSQL at {nobody} is not reachable: ")
    assert result["measurements"] == []
    assert "skipped tarry-postgresql: PostgreSQL at" in finished.stdout
