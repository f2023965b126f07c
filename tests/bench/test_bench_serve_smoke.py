"""The serve benchmark still runs end to end on SQLite (tiny sizes; figures not judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "serve.py"
_TINY = ["--clients", "2", "--starts", "10", "--events", "10", "--resumes", "3",
         "--timers", "20", "--limit-seconds", "0.05"]


@pytest.mark.slow
def test_the_serve_benchmark_reports_every_figure(tmp_path: Path) -> None:
    result_file = tmp_path / "serve.json"
    finished = subprocess.run([sys.executable, str(_SCRIPT), *_TINY,
                               "--store", f"sqlite:///{tmp_path}/bench.db",
                               "--json", str(result_file)],
                              capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 0, finished.stderr
    [store] = json.loads(result_file.read_text(encoding="utf-8"))["stores"]
    assert store["http"]["starts"]["per_second"] > 0
    assert store["http"]["events"]["per_second"] > 0
    assert set(store["send_to_resume"]) == {"p50_ms", "p99_ms"}
    assert store["loop_lag"]["wakes_per_second"] > 0
