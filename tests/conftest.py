"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os

import pytest

pytest_plugins = ["backends", "browsers"]


@pytest.fixture(autouse=True)
def _scrub_tarry_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's TARRY_* settings (TARRY_TEST_* stay: they select servers)."""
    for name in list(os.environ):
        if name.startswith("TARRY_") and not name.startswith("TARRY_TEST_"):
            monkeypatch.delenv(name)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that start real processes and watch the wall clock (marked ``slow``) share one
    xdist group: they run one after another, so they never starve each other of the
    machine's cores (``scripts/test`` runs with ``--dist loadgroup``)."""
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.xdist_group("real-time"))
