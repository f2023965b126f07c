"""What pacing keeps goes with the runs retention deletes: a throttle's turns and a debounced
burst, on both stores (a store with retention on stays bounded)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tarry.model import RunStatus
from tarry.store.sqlstore import SqlStore
from tarry.testing import Harness

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PACED = """\
flow: paced
on:
  - event: forge.push
    debounce: { key: "{{ event.repo }}", period: 1m }
throttle: { limit: 1, per: 1m }
steps:
  - done: { exit: ok }
"""


def rows_of(store: SqlStore, table: str) -> int:
    with store._transaction(write=False) as tx:
        tx.cursor.execute(f"SELECT count(*) AS total FROM {table}")
        return int(tx.cursor.fetchall()[0]["total"])


async def test_turns_and_bursts_go_with_their_runs(tmp_path: Path, store_url: str) -> None:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "paced.yaml").write_text(PACED, encoding="utf-8")
    manifests = "events:\n  forge.push:\n    correlate_on: [repo]\n"
    with Harness(tmp_path, start=START, store_url=store_url, manifests=manifests) as harness:
        store = harness.engine.store
        assert isinstance(store, SqlStore)
        [run_id] = harness.send("forge.push", {"repo": "acme/web"}).started
        await harness.run_until_idle()
        assert harness.record(run_id).status is RunStatus.SUCCEEDED
        assert (rows_of(store, "throttle_turns"), rows_of(store, "debounces")) == (1, 1)
        assert store.purge_ended_runs(harness.clock.now() + timedelta(seconds=1), 100) == 1
        assert (rows_of(store, "throttle_turns"), rows_of(store, "debounces")) == (0, 0)
