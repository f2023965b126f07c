"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os

import pytest

pytest_plugins = ["backends"]


@pytest.fixture(autouse=True)
def _scrub_tarry_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's TARRY_* settings (TARRY_TEST_* stay: they select servers)."""
    for name in list(os.environ):
        if name.startswith("TARRY_") and not name.startswith("TARRY_TEST_"):
            monkeypatch.delenv(name)
