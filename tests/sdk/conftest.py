"""Harnesses for Python flows: the real engine on a virtual clock, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sdk_support import MANIFESTS, START, HarnessFor

from tarry import App
from tarry.testing import Harness


@pytest.fixture
def harness_for(tmp_path: Path, store_url: str) -> Iterator[HarnessFor]:
    """Builds harnesses running an app's flows; several share the test's store (a worker
    restarted with other code, say)."""
    made: list[Harness] = []

    def make(app: App) -> Harness:
        made.append(Harness(tmp_path / f"harness{len(made)}", start=START, app=app,
                            manifests=MANIFESTS, store_url=store_url))
        return made[-1]

    yield make
    for harness in made:
        harness.close()
