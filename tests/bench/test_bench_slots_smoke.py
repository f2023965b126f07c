"""The slots benchmark still runs end to end (tiny sizes; figures not judged but the one
that must hold: no key over its limit)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.slow
def test_the_slots_benchmark_writes_every_figure(tmp_path: Path) -> None:
    result_file = tmp_path / "slots.json"
    finished = subprocess.run(
        [sys.executable, str(_BENCH / "slots.py"), "--store", f"sqlite:///{tmp_path}/b.db",
         "--runs", "24", "--keys", "3", "--limit", "2", "--limit-seconds", "0.1",
         "--json", str(result_file)],
        capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 0, finished.stderr
    [sqlite] = json.loads(result_file.read_text(encoding="utf-8"))["stores"]
    assert sqlite["one_key"]["ended"] == sqlite["many_keys"]["ended"] == 24
    assert sqlite["one_key"]["most_at_once"] == 1
    assert 1 <= sqlite["many_keys"]["most_at_once"] <= 2
    assert sqlite["one_key"]["hand_over_ms_p99"] >= 0
