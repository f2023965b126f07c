"""docs/python.md's "Continuing as new" shows only what works: its subscription flow
continues as new each month and its test, as written, passes under pytest, on SQLite and
PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from markdown_blocks import Document
from tarry.testing import Harness

GUIDE = Document("docs/python.md", __file__)
FLOW, TEST = GUIDE.blocks("python", after="## Continuing as new")


@pytest.fixture
def module(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A module of its own to run the guide's flow in (gone after the test)."""
    created = ModuleType("continue_example")
    monkeypatch.setitem(sys.modules, created.__name__, created)
    exec(compile(FLOW, "docs/python.md", "exec"), created.__dict__)
    exec(compile(TEST, "docs/python.md", "exec"), created.__dict__)
    return created


async def test_the_guides_test_passes_on_each_store(module: ModuleType, tmp_path: Path,
                                                    store_url: str) -> None:
    harness = Harness(tmp_path, app=module.app, manifests=module.MANIFESTS,
                      store_url=store_url)
    first = harness.start("subscription", {"customer": "acme"})
    await harness.advance(module.timedelta(days=95))
    chain = harness.chain(first)
    assert [harness.record(run_id).inputs["month"] for run_id in chain] == [1, 2, 3, 4]
    assert [harness.record(run_id).exit for run_id in chain[:-1]] == ["continued"] * 3
    harness.send("subscription.cancelled", {"customer": "acme"})
    await harness.run_until_idle()
    assert harness.record(chain[-1]).result == "cancelled in month 4"
    harness.close()


def test_the_guides_test_passes_under_pytest_as_written(tmp_path: Path) -> None:
    (tmp_path / "subscription.py").write_text(FLOW, encoding="utf-8")
    (tmp_path / "test_subscription.py").write_text(
        "from subscription import app\n" + TEST, encoding="utf-8")
    finished = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "-n", "0", "test_subscription.py"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "1 passed" in finished.stdout
