"""The hostile-expressions benchmark still runs end to end (tiny sizes; the figures themselves
are not judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "hostile_expressions.py"


@pytest.mark.slow
def test_the_hostile_expressions_benchmark_writes_every_figure(tmp_path: Path) -> None:
    result_file = tmp_path / "hostile.json"
    finished = subprocess.run(
        [sys.executable, str(_SCRIPT), "--timers", "10", "--heavy", "2", "--spread-seconds",
         "0.2", "--lead-seconds", "0.3", "--json", str(result_file)],
        capture_output=True, text=True, timeout=50, check=False)
    assert finished.returncode == 0, finished.stderr
    assert "timer lateness p99 (ms)" in finished.stdout
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert (result["timers"], result["heavy"], result["heavy_failed"]) == (10, 2, 2)
    assert set(result["lateness_ms"]) == {"p50", "p99", "max"}
    assert [target["name"] for target in result["targets"]] == ["timer lateness p99 (ms)"]
