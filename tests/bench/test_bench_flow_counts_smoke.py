"""The flow-counts benchmark still runs end to end on each store (tiny sizes; figures not
judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "flow_counts.py"


@pytest.mark.slow
def test_the_flow_counts_benchmark_writes_every_figure(tmp_path: Path, store_url: str) -> None:
    result_file = tmp_path / "flow_counts.json"
    base = (store_url if store_url.startswith("postgresql")
            else f"sqlite:///{tmp_path}/bench.db")
    finished = subprocess.run(
        [sys.executable, str(_SCRIPT), "--runs", "400", "--samples", "2",
         "--limit-seconds", "0.05", "--store", base, "--json", str(result_file)],
        capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 0, finished.stderr
    assert "flow page p50 / p95 ms" in finished.stdout
    result: dict[str, Any] = json.loads(result_file.read_text(encoding="utf-8"))
    assert result["waiting"] == 400
    assert result["counts_ms"]["p50"] > 0
    assert result["page_ms"]["p50"] > 0
