"""docs/python.md, "Changing a flow while runs wait": the before, patched and retired versions
of the flow behave as the guide says under runs left waiting by the version before; the
console output, the CI command and the pytest helper are the real ones."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from markdown_blocks import Document, add_config, fresh_project, run_console, shell
from tarry import App
from tarry.model import RunStatus
from tarry.testing import Harness

GUIDE = Document("docs/python.md", __file__)
SECTION = "## Changing a flow while runs wait"
BEFORE = GUIDE.block("python", after=SECTION)
PATCHED = GUIDE.block("python", after="Now VAT must be added before charging.")
RETIRED = GUIDE.block("python", after="### Retiring a patch")
CONSOLE = GUIDE.block("console", after="### The deploy check: `tarry replay`")
CI = GUIDE.block("sh", after="In continuous integration, run it")
PYTEST = GUIDE.block("python", after="### In your tests")

UNPATCHED = RETIRED.replace('    ctx.deprecate_patch("vat-before-charge")\n', "")
"""The new code inserted without a patch: what the console block shows tarry replay catch."""


def version(flow: str | None) -> App:
    """The guide's app, its flow replaced by the block ``flow`` (None: as first shown)."""
    namespace: dict[str, Any] = {}
    exec(compile(BEFORE, "docs/python.md", "exec"), namespace)
    if flow is not None:
        namespace["app"] = App()
        exec(compile(flow, "docs/python.md", "exec"), namespace)
    app: App = namespace["app"]
    return app


def _steps(harness: Harness, run_id: str) -> list[str]:
    return [op["name"] for op in harness.document(run_id)["journal"] if op["kind"] == "step"]


async def test_each_version_keeps_the_runs_of_the_one_before_on_their_path(
        tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'tarry.db'}"
    first = Harness(tmp_path / "v1", app=version(None), store_url=store)
    old = first.start("settle-order", {"order_id": "A1"})
    await first.run_due()
    second = Harness(tmp_path / "v2", app=version(PATCHED), store_url=store)
    patched = second.start("settle-order", {"order_id": "A2"})
    await second.run_due()
    await second.assert_replays()

    third = Harness(tmp_path / "v3", app=version(RETIRED), store_url=store)
    report = await third.replay()  # the run recorded before the patch still waits
    assert {(r.run_id, r.verdict) for r in report.results} == {(old, "nondeterminism"),
                                                                (patched, "ok")}

    await second.run_until_idle()  # version 2 finishes the run recorded before the patch
    assert _steps(second, old) == ["reserve", "charge", "ship"]
    third.clock.set(second.clock.now())
    retired = third.start("settle-order", {"order_id": "A3"})
    await third.assert_replays()
    await third.run_until_idle()
    for run_id in (patched, retired):
        assert third.record(run_id).status is RunStatus.SUCCEEDED
        assert _steps(third, run_id) == ["reserve", "add-vat", "charge", "ship"]
    for harness in (first, second, third):
        harness.close()


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A project (``tarry init``) whose app is the guide's, with one run in its cooling-off."""
    root = fresh_project(tmp_path / "shop")
    (root / "shop.py").write_text(BEFORE, encoding="utf-8")
    add_config(root, '[tarry]\napp = "shop:app"\n')
    started = shell("tarry start settle-order -i order_id=A1 && tarry worker --once", root)
    assert started.returncode == 0, started.stderr
    return root


def deploy(root: Path, flow: str) -> None:
    """Replace the flow in shop.py by the block ``flow``."""
    source = BEFORE[:BEFORE.index('@app.flow("settle-order")')] + flow
    (root / "shop.py").write_text(source, encoding="utf-8")
    for cached in (root / "__pycache__").glob("shop.*"):
        cached.unlink()


def replay_database(root: Path) -> dict[str, str]:
    return {"REPLAY_DATABASE": f"sqlite:///{root / '.tarry' / 'tarry.db'}"}


def with_replay_database(root: Path, command: str) -> str:
    """``command`` run with REPLAY_DATABASE naming the project's own store (its copy, in
    the guide's CI)."""
    return f"export REPLAY_DATABASE={replay_database(root)['REPLAY_DATABASE']}\n{command}"


def test_tarry_replay_catches_the_unpatched_change_as_shown(shop: Path) -> None:
    deploy(shop, UNPATCHED)
    run_console(CONSOLE, shop)
    assert shell(with_replay_database(shop, CI), shop).returncode == 1
    deploy(shop, PATCHED)
    checked = shell(with_replay_database(shop, CI), shop)
    assert (checked.returncode, checked.stdout) == (0, (
        "replayed 1 run of Python flows: 0 would hit nondeterminism, 0 would fail "
        "otherwise\n"))


@pytest.mark.timeout(120)  # pytest, in a process of its own
def test_the_pytest_helper_passes_on_the_patch_and_fails_without_it(shop: Path) -> None:
    (shop / "test_replay.py").write_text(PYTEST, encoding="utf-8")

    def pytest_in_shop() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                              cwd=shop, capture_output=True, text=True, timeout=100,
                              check=False, env={**os.environ, **replay_database(shop)})

    deploy(shop, PATCHED)
    passed = pytest_in_shop()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    deploy(shop, UNPATCHED)
    failed = pytest_in_shop()
    assert failed.returncode == 1
    assert ("nondeterminism at charge: the flow changed at operation 2: the run recorded step "
            "'charge', the code now asks for step 'add-vat'") in failed.stdout
