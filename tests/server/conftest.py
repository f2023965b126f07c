"""Fixtures of the server tests: a project on each store, served over a real socket."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from server_support import Served, serve, write_project


@pytest.fixture
def project(tmp_path: Path, store_url: str) -> Path:
    """The test project on the test's store (once per backend)."""
    return write_project(tmp_path / "project", store_url)


@pytest.fixture
def served(project: Path) -> Iterator[Served]:
    """The test project served without a token (loopback only)."""
    with serve(project) as server:
        yield server
