"""The Python-flow resume benchmark still runs end to end (tiny sizes; figures not judged):
both parts, the resume per recorded operation and a chain that continues as new."""

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
    finished = subprocess.run([sys.executable, str(_SCRIPT), "--sizes", "2,6", "--runs", "1",
                               "--segments", "3", "--segment-ops", "4",
                               "--json", str(result_file)],
                              capture_output=True, text=True, timeout=50, check=False)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.startswith("tarry Python-flow resume cost: sqlite")
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert result["fixed"]["recorded_ops"] == 0
    assert [size["recorded_ops"] for size in result["sizes"]] == [2, 6]
    for size in result["sizes"]:
        assert size["store_calls_per_resume"] == {"checkpoint": 1.0, "claim_run": 1.0,
                                                  "get_run": 1.0, "inbox": 1.0,
                                                  "read_journal": 1.0}
        assert size["resume_ms"]["median"] > 0
        assert size["resume_cpu_ms"]["median"] > 0
        assert {"marginal_cpu_us_per_op", "whole_cpu_us_per_op", "marginal_wall_us_per_op",
                "whole_wall_us_per_op"} <= set(size)
    chain = result["chain"]
    assert (chain["segments"], chain["total_ops"], len(chain["resume_cpu_ms"])) == (3, 12, 3)
    assert [target["name"] for target in result["targets"]] == [
        "2 ops: marginal CPU µs per op ÷ 10 µs", "6 ops: marginal CPU µs per op ÷ 10 µs",
        "chain: last tenth ÷ first tenth of segment resumes (CPU)"]
