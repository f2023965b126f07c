"""The Python-flow resume benchmark still runs end to end (tiny sizes; figures not judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "sdk_replay.py"


@pytest.mark.slow
def test_sdk_replay_benchmark_writes_every_figure(tmp_path: Path) -> None:
    result_file = tmp_path / "sdk_replay.json"
    finished = subprocess.run([sys.executable, str(_SCRIPT), "--sizes", "2,6", "--runs", "2",
                               "--json", str(result_file)],
                              capture_output=True, text=True, timeout=50, check=False)
    assert finished.returncode == 0, finished.stderr
    assert "store calls per resume" in finished.stdout
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert [size["recorded_ops"] for size in result["sizes"]] == [2, 6]
    for size in result["sizes"]:
        assert size["store_calls_per_resume"] == {"checkpoint": 1.0, "claim_run": 1.0,
                                                  "get_run": 1.0, "inbox": 1.0,
                                                  "read_journal": 1.0}
        assert size["resume_ms"]["median"] > 0
        assert size["state_bytes"] > 0
    assert [target["name"] for target in result["targets"]] == [
        "store calls per resume, largest ÷ smallest", "resume time, 6 ÷ 2 ops (3× the history)"]
