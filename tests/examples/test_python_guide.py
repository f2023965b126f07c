"""docs/python.md shows only what works: its flow and its test run (in a project made by
``tarry init``, with only what the guide says to add), its serializer round-trips, its tables
say what the code does, and the messages it quotes are the code's."""

from __future__ import annotations

import ast
import filecmp
import inspect
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from markdown_blocks import ROOT, TARRY, Document, add_config, add_event_types, fresh_project
from tarry import Jitter, WaitStrategy
from tarry.sdk import runner
from tarry.sdk.serializers import Codec

GUIDE = Document("docs/python.md", __file__)
OPENING = GUIDE.block("python")
APP_CONFIG = GUIDE.block("toml", after="### Running Python flows from the command line")
EVENT_TYPE = GUIDE.block("yaml", after="### Running Python flows from the command line")
CONDITION = GUIDE.block("python", after="## wait_for_condition and wait strategies")
SERIALIZER = GUIDE.block("python", after="### Serialization")
TESTING = GUIDE.block("python", after="## Testing")
REGENERATE = GUIDE.block("sh", after="**Golden histories.**")
JOURNAL = GUIDE.block("json", after="## Storage and cost")


@pytest.fixture
def module(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A module of its own to run the guide's code in (gone after the test)."""
    created = ModuleType("guide_example")
    monkeypatch.setitem(sys.modules, created.__name__, created)
    return created


def run_block(source: str, module: ModuleType) -> dict[str, Any]:
    """Execute a Python block in ``module``; the module's names."""
    exec(compile(source, "docs/python.md", "exec"), module.__dict__)
    return module.__dict__


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A new project (``tarry init``) with the guide's ``shop.py``, named in its tarry.toml,
    and the event type it waits for added to its events.yaml."""
    root = fresh_project(tmp_path / "shop")
    (root / "shop.py").write_text(OPENING, encoding="utf-8")
    add_config(root, APP_CONFIG)
    add_event_types(root, EVENT_TYPE)
    return root


@pytest.mark.timeout(120)  # pytest, in a process of its own
def test_the_testing_example_passes_under_pytest_as_written(shop: Path) -> None:
    (shop / "test_shop.py").write_text(TESTING, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                            cwd=shop, capture_output=True, text=True, timeout=100, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_the_app_named_in_tarry_toml_runs_from_the_command_line(shop: Path) -> None:
    result = subprocess.run([str(TARRY), "run", "settle-order", "-i", "order_id=A1"],
                            cwd=shop, capture_output=True, text=True, timeout=60,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1].startswith("waiting for timer at step 'cooling-off'")


def test_the_condition_example_is_the_opening_flows_call() -> None:
    def calls(source: str) -> list[str]:
        tree = ast.parse(source)
        return [ast.dump(node) for node in ast.walk(tree)
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Await)
                and isinstance(node.value.value, ast.Call)
                and ast.unparse(node.value.value.func) == "ctx.wait_for_condition"]
    [shown] = calls(CONDITION)
    assert shown in calls(OPENING)


def test_the_serializer_example_round_trips(module: ModuleType) -> None:
    namespace = run_block(SERIALIZER, module)
    codec = Codec(namespace["MoneySerializer"]())
    money = namespace["Money"](5, "EUR")
    assert codec.store(money, "x") == {"$money": [5, "EUR"]}
    assert codec.load(codec.store(money, "x")) == money


def test_the_error_table_lists_every_error_type_of_a_failed_python_run() -> None:
    section = GUIDE.text[GUIDE.text.index("## When a run fails"):GUIDE.text.index("## Testing")]
    listed = [line.split("`")[1] for line in section.splitlines()
              if line.startswith("| `") and "error.type" not in line]
    assert listed == [token for _, token, _ in runner._FAILURES] + ["exception"]


def _defaults(factory: Any) -> dict[str, Any]:
    return {name: parameter.default
            for name, parameter in inspect.signature(factory).parameters.items()
            if parameter.default is not inspect.Parameter.empty
            and name not in ("is_done",)}


@pytest.mark.parametrize(("name", "written"), [
    ("exponential", {"max_attempts": 60, "initial_delay": "5s", "max_delay": "300s",
                     "rate": 1.5, "jitter": Jitter.FULL}),
    ("linear", {"max_attempts": 60, "initial_delay": "5s", "increment": "5s",
                "max_delay": None}),
    ("fixed", {"max_attempts": 60}),
])
def test_the_strategy_table_gives_the_codes_defaults(name: str, written: dict[str, Any]) -> None:
    row = next(line for line in GUIDE.text.splitlines()
               if line.startswith(f"| `WaitStrategy.{name}"))
    assert _defaults(getattr(WaitStrategy, name)) == written
    for key, value in written.items():
        shown = "FULL" if value is Jitter.FULL else value
        assert f"{key}={shown}" in row


def test_the_quoted_refusals_are_the_codes() -> None:
    with pytest.raises(ValueError, match=r"^rate must be") as raised:
        WaitStrategy.exponential(rate=0.5)
    assert f"`{raised.value}`" in GUIDE.text
    assert "`input 'order_id' is required`" in GUIDE.text


def test_the_journal_shown_has_the_stored_shape() -> None:
    journal = json.loads(JOURNAL)["journal"]
    assert set(journal) == {"ops", "order"}
    assert list(journal["ops"]) == [name for _, name in journal["order"][""]]


@pytest.mark.timeout(240)  # every golden case, in a process of its own
def test_regenerating_the_golden_histories_gives_the_files_checked_in(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples" / "python", tmp_path / "examples" / "python",
                    ignore=shutil.ignore_patterns(".tarry", "__pycache__"))
    (tmp_path / "tests" / "sdk").mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "sdk" / "golden_cases.py", tmp_path / "tests" / "sdk")
    (tmp_path / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    result = subprocess.run(REGENERATE, shell=True, cwd=tmp_path, capture_output=True,
                            text=True, timeout=200, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    golden = sorted(path.name for path in (ROOT / "tests" / "sdk" / "golden").iterdir())
    same, changed, missing = filecmp.cmpfiles(ROOT / "tests" / "sdk" / "golden",
                                              tmp_path / "tests" / "sdk" / "golden", golden,
                                              shallow=False)
    assert (same, changed, missing) == (golden, [], [])
