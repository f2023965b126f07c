"""The bulk benchmark still runs end to end (tiny sizes; figures not judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.slow
def test_the_bulk_benchmark_cancels_every_run_and_times_the_timers(tmp_path: Path) -> None:
    result_file = tmp_path / "bulk.json"
    finished = subprocess.run(
        [sys.executable, str(_BENCH / "bulk.py"), "--store", f"sqlite:///{tmp_path}/b.db",
         "--runs", "450", "--timer-rate", "20", "--timer-seconds", "1",
         "--limit-seconds", "0.1", "--json", str(result_file)],
        capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 0, finished.stderr
    result = json.loads(result_file.read_text(encoding="utf-8"))
    batch = result["batch"]
    assert (batch["total"], batch["acted"], batch["skipped"]) == (450, 450, 0)
    assert batch["transactions"] == 4  # the count, then pages of 200, 200 and 50
    assert batch["longest_transaction_ms"] > 0
    assert result["timers"]["all"]["timers"] == 20
    assert result["limit"]["per_second"] > 0
