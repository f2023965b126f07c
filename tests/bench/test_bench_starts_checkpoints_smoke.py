"""The starts and checkpoints benchmarks still run end to end (tiny sizes; figures not
judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench"


def _run(script: str, tmp_path: Path, *args: str) -> dict[str, object]:
    result_file = tmp_path / f"{script}.json"
    finished = subprocess.run(
        [sys.executable, str(_BENCH / f"{script}.py"), *args, "--json", str(result_file)],
        capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 0, finished.stderr
    return dict(json.loads(result_file.read_text(encoding="utf-8")))


@pytest.mark.slow
def test_the_starts_benchmark_writes_every_figure(tmp_path: Path) -> None:
    result = _run("starts", tmp_path, "--store", f"sqlite:///{tmp_path}/b.db", "--single",
                  "20", "--callers", "4", "--batched", "40", "--batch", "20",
                  "--limit-seconds", "0.1")
    [sqlite] = result["stores"]  # type: ignore[misc]
    assert sqlite["store"] == "sqlite"
    assert sqlite["single_per_second"] > 0
    assert (sqlite["callers"], sqlite["concurrent_per_second"] > 0) == (4, True)
    assert sqlite["batched_per_second"] > 0


@pytest.mark.slow
def test_the_checkpoints_benchmark_writes_every_figure(tmp_path: Path) -> None:
    result = _run("checkpoints", tmp_path, "--sizes", "2,4", "--runs", "1",
                  "--limit-seconds", "0.1")
    rows = result["results"]
    assert [(r["workload"], r["steps"]) for r in rows] == [  # type: ignore[attr-defined]
        (name, n) for name in ("python", "python-map", "yaml", "yaml-large", "for_each")
        for n in (2, 4)]
    assert all(r["written_bytes"] >= 0 and r["resume_ms"] > 0 for r in rows)  # type: ignore[attr-defined]
