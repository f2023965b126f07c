"""Two ``tarry worker`` processes sharing one store never create a schedule occurrence twice.

The schedule (every minute, ``catch_up: all``) is stored as last handled 30 minutes ago, as if
every worker had been down; then two worker processes start at the same moment and race for
the missed occurrences. Afterwards each occurrence exists once, with one run each.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest

from tarry.clock import SystemClock
from tarry.config import load_settings
from tarry.engine.runtime import Engine

pytestmark = pytest.mark.slow

TARRY = Path(sys.executable).parent / "tarry"
EVERY_MINUTE = """\
flow: tick
on:
  - schedule: "* * * * *"
    timezone: Europe/Berlin
    catch_up: all
steps:
  - done: { exit: ticked }
"""


def project(root: Path, store_url: str) -> Path:
    """A project whose one flow has the every-minute schedule."""
    (root / "flows").mkdir(parents=True)
    (root / "flows" / "tick.yaml").write_text(EVERY_MINUTE)
    (root / "tarry.toml").write_text(f'[tarry]\ndatabase = "{store_url}"\n')
    return root


def test_two_worker_processes_create_each_missed_occurrence_once(tmp_path: Path,
                                                                  store_url: str) -> None:
    root = project(tmp_path / "project", store_url)
    engine = Engine.from_settings(load_settings(root, {}))
    try:
        now = SystemClock().now()
        [(key, (flow, _))] = engine.triggers.schedules().items()
        down_since = now - timedelta(minutes=30)
        engine.store.sync_schedules([(key, flow.name, down_since)], down_since)

        env = {k: v for k, v in os.environ.items() if not k.startswith("TARRY_")}
        workers = [subprocess.Popen([str(TARRY), "worker", "--once"], cwd=root, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                   for _ in range(2)]
        outcomes = [worker.communicate(timeout=120) for worker in workers]

        assert [worker.returncode for worker in workers] == [0, 0], outcomes
        runs = engine.store.list_runs(flow="tick", limit=1000)
        instants = Counter(engine.store.history(run.id)[0].data["scheduled_at"] for run in runs)
        assert len(instants) >= 30
        assert set(instants.values()) == {1}
        assert all(run.exit == "ticked" for run in runs)
    finally:
        engine.close()
