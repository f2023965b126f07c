"""docs/python.md shows only what works: its flow and its test run, its serializer round-trips,
its tables say what the code does, and the messages it quotes are the code's."""

from __future__ import annotations

import ast
import inspect
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from markdown_blocks import ROOT, block_after, blocks

from tarry import Jitter, WaitStrategy
from tarry.sdk import runner
from tarry.sdk.serializers import Codec

GUIDE = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")


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


def test_every_python_block_compiles() -> None:
    for source in blocks(GUIDE, "python"):  # a fragment may await, as in a flow's body
        compile(source, "docs/python.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


async def test_the_opening_flow_and_the_testing_example_run(tmp_path: Path,
                                                            module: ModuleType) -> None:
    run_block(blocks(GUIDE, "python")[0], module)
    namespace = run_block(block_after(GUIDE, "## Testing", "python"), module)
    await namespace["test_settles_after_approval"](tmp_path)


def test_the_serializer_example_round_trips(module: ModuleType) -> None:
    namespace = run_block(block_after(GUIDE, "### Serialization", "python"), module)
    codec = Codec(namespace["MoneySerializer"]())
    money = namespace["Money"](5, "EUR")
    assert codec.store(money, "x") == {"$money": [5, "EUR"]}
    assert codec.load(codec.store(money, "x")) == money


def test_the_error_table_lists_every_error_type_of_a_failed_python_run() -> None:
    section = GUIDE[GUIDE.index("## When a run fails"):GUIDE.index("## Testing")]
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
    row = next(line for line in GUIDE.splitlines() if line.startswith(f"| `WaitStrategy.{name}"))
    assert _defaults(getattr(WaitStrategy, name)) == written
    for key, value in written.items():
        shown = "FULL" if value is Jitter.FULL else value
        assert f"{key}={shown}" in row


def test_the_quoted_refusals_are_the_codes() -> None:
    with pytest.raises(ValueError, match=r"^rate must be") as raised:
        WaitStrategy.exponential(rate=0.5)
    assert f"`{raised.value}`" in GUIDE
    assert "`input 'order_id' is required`" in GUIDE


def test_the_journal_shown_has_the_stored_shape() -> None:
    journal = json.loads(block_after(GUIDE, "## Storage and cost", "json"))["journal"]
    assert set(journal) == {"ops", "order"}
    assert list(journal["ops"]) == [name for _, name in journal["order"][""]]


def test_the_regeneration_command_names_the_recorder() -> None:
    command = block_after(GUIDE, "**Golden histories.**", "sh").split()
    assert (ROOT / command[1]).is_file()
