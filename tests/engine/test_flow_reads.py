"""A worker reads a run's stored flow from the store once per flow, not at each wake: a
worker that did not start the runs (another process's, here another engine on the same
store) loads a YAML flow's source or a Python flow's definition the first time one of its
runs wakes, then answers from memory."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tarry import App, Context
from tarry.model import RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

NAPS = """\
flow: naps
steps:
  - one: { wait: { for: 1h } }
  - two: { wait: { for: 1h } }
"""


def _app() -> App:
    app = App()

    @app.flow("python-naps")
    async def naps(ctx: Context) -> str:
        await ctx.wait("one", "1h")
        await ctx.wait("two", "1h")
        return "rested"

    return app


async def test_a_worker_reads_each_flow_from_the_store_once(
        tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    starter = Harness(tmp_path / "starter", start=START, store_url=store_url, app=_app())
    waker = Harness(tmp_path / "waker", start=START, store_url=store_url, app=_app())
    try:
        runs = [starter.start(starter.flow(NAPS)) for _ in range(3)]
        runs += [starter.start("python-naps") for _ in range(3)]
        reads: Counter[str] = Counter()
        source = waker.engine.store.flow_source

        def counted(digest: str) -> str:
            reads[digest] += 1
            return source(digest)

        monkeypatch.setattr(waker.engine.store, "flow_source", counted)
        await waker.run_due()
        await waker.advance(timedelta(hours=1))
        await waker.advance(timedelta(hours=1))
        assert {waker.record(run).status for run in runs} == {RunStatus.SUCCEEDED}
        digests = {waker.record(run).flow_digest for run in runs}
        assert reads == Counter(dict.fromkeys(digests, 1))
    finally:
        starter.close()
        waker.close()
