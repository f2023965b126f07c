"""What the Python-flow tests share: the start instant, the event manifests, harness types."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

from tarry import App
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

MANIFESTS = """
events:
  slack.approval:
    correlate_on: [message]
  vendor.reply:
    correlate_on: [vendor, round]
    buffer: 10m
"""

HarnessFor = Callable[[App], Harness]
"""Builds a harness running an app's flows on the test's store (see conftest.py)."""


def exactly(message: str) -> str:
    """A ``pytest.raises(match=...)`` pattern for exactly ``message``."""
    return f"^{re.escape(message)}$"
