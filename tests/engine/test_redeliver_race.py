"""Operators redelivering one event at the same moment deliver it once."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

from tarry.errors import EventError
from tarry.model import EventRecord, EventState
from tarry.testing import Harness

MANIFESTS = "events:\n  ticket.reply:\n    correlate_on: [ticket]\n    buffer: 0\n"
FLOW = """
flow: waiting
steps:
  - reply:
      wait_for: ticket.reply
      match: { ticket: "T1" }
      timeout: 1d
"""


async def test_concurrent_redeliveries_deliver_once(tmp_path: Path, store_url: str) -> None:
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    with Harness(tmp_path, start=start, manifests=MANIFESTS, store_url=store_url) as harness:
        assert harness.send("ticket.reply", {"ticket": "T1"}, id="early").state is \
            EventState.UNMATCHED  # no run waits yet and nothing is buffered
        run_id = harness.start(harness.flow(FLOW))
        await harness.run_due()
        operators = [Harness(tmp_path / f"op{i}", start=start, manifests=MANIFESTS,
                             store_url=store_url) for i in range(6)]
        outcomes: list[EventRecord | EventError] = []
        barrier = threading.Barrier(len(operators))

        def redeliver(operator: Harness) -> None:
            barrier.wait()
            try:
                outcomes.append(operator.engine.redeliver("early"))
            except EventError as refused:
                outcomes.append(refused)

        threads = [threading.Thread(target=redeliver, args=(op,)) for op in operators]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        delivered = [o for o in outcomes if isinstance(o, EventRecord)]
        assert [(d.state, d.runs) for d in delivered] == [(EventState.DELIVERED, (run_id,))]
        assert all("is delivered" in str(o) for o in outcomes if isinstance(o, EventError))
        assert len(harness.engine.store.inbox([run_id])[run_id]) == 1
        for operator in operators:
            operator.close()
