"""Hostile expressions: the worst a render can do is bounded in work units that each stand
for about a nanosecond (a character, a list's item, a step in Python), so an expression that
hits its budget costs milliseconds, not seconds; a value read from the run's scope is written
out without a walk; and a walk whose renders add up to a budget's worth lets other runs go on.
(The timers' lateness beside such runs, on the real clock: ``bench/hostile_expressions.py``.)"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionRegistry
from tarry.engine.builtins import register_builtins
from tarry.engine.interpreter import Env, Interpreter
from tarry.engine.outcome import Done
from tarry.errors import ExpressionError
from tarry.language.expressions import EvalContext, compile_template
from tarry.language.expressions import context as context_module
from tarry.language.expressions.limits import CHARS_PER_UNIT, ITEM_WORK, MAX_WORK, STEP_WORK
from tarry.language.loader import parse_flow
from tarry.model import RunStatus
from tarry.testing import Harness

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
CTX = EvalContext(now=NOW)
DEEP = "[" * 40 + "1" + "]" * 40

HEAVY = [
    f"{{{{ ([{DEEP}] * 99999) == ([{DEEP}] * 99999) }}}}",
    f"{{{{ ([{DEEP}] * 99) == ([{DEEP}] * 99) }}}}",
    f"{{{{ ([{DEEP}] * 99999) | json }}}}",
    f"{{{{ [{DEEP}] * 99999 }}}}",
    "{{ [[0]] in [[1]] * 99999 }}",
    "{{ [{'a': 'b'}] * 99999 == [{'a': 'b'}] * 99999 }}",
    "{{ ['a'] * 99999 == ['a'] * 99999 }}",
    "{{ ([('a' * 999999)] * 99999) | json }}",
    "{{ [[1] * 100000] * 100000 == [[1] * 100000] * 100000 }}",
]
"""Expressions that hit the budget; before it was sized by cost, the first took 5 s."""


class Ledger:
    """Every charge of the renders under test: how many units, in how many steps."""

    def __init__(self) -> None:
        self.units: list[int] = []


@pytest.fixture
def ledger(monkeypatch: pytest.MonkeyPatch) -> Ledger:
    kept = Ledger()
    charge = context_module.Env.charge

    def counted(env: context_module.Env, units: int) -> None:
        kept.units.append(units)
        charge(env, units)

    monkeypatch.setattr(context_module.Env, "charge", counted)
    return kept


@pytest.mark.parametrize("source", HEAVY)
def test_a_render_that_hits_the_budget_stops_within_it(source: str, ledger: Ledger) -> None:
    with pytest.raises(ExpressionError, match=r"too much work \(more than 1,000,000 units\)"):
        compile_template(source).render({}, CTX)
    # Each piece of work is charged before it is done (or, for a step, as it begins), so
    # what was done is at most the budget and the one charge that passed it; and no step in
    # Python went uncharged: each charges STEP_WORK (and at most one charge more beside it),
    # so there are at most a budget's worth of them.
    assert sum(ledger.units[:-1]) <= MAX_WORK
    assert sum(1 for units in ledger.units if units >= STEP_WORK) <= MAX_WORK // STEP_WORK + 1
    assert len(ledger.units) <= 2 * (MAX_WORK // STEP_WORK) + 10


def test_the_units_weigh_a_step_in_python_above_an_item_and_an_item_above_a_character(
        ) -> None:
    assert (MAX_WORK, STEP_WORK, ITEM_WORK, CHARS_PER_UNIT) == (1_000_000, 1_000, 20, 4)
    assert MAX_WORK // STEP_WORK == 1_000  # steps of about a microsecond: a millisecond


def _payload(items: int) -> dict[str, Any]:
    return {"items": [{"sku": f"S{n}", "qty": n, "tags": ["a", "b"]} for n in range(items)]}


@pytest.mark.parametrize("source", [
    "{{ event }}", "{{ event.items }}", "{{ event.items | default([]) }}",
    "{{ event | json }}", "order: {{ event.items }}",
])
def test_a_large_value_of_the_scope_is_written_out_without_a_walk(source: str) -> None:
    event = _payload(20_000)  # 80,000 items: a walk of it would cost 80 million units
    assert compile_template(source).render({"event": event}, CTX)


def test_a_value_built_from_the_scope_is_walked() -> None:
    with pytest.raises(ExpressionError, match="too much work"):
        compile_template("{{ [event] * 2 }}").render({"event": _payload(20_000)}, CTX)


PACED = "flow: paced\nsteps:\n" + "".join(
    f"  - s{n}: {{ set: {{ v: \"{{{{ ('x' * 900000) | length }}}}\" }} }}\n" for n in range(12))
"""Twelve steps of about 225,000 units each (900,000 characters built): nearly three
budgets' worth, and no I/O."""


async def test_a_walk_lets_other_runs_go_on_after_a_budgets_worth_of_renders() -> None:
    actions = ActionRegistry()
    register_builtins(actions)

    async def no_checkpoint() -> None:
        raise AssertionError("the walk checkpointed")

    env = Env(run_id="r1", flow=parse_flow(PACED, "paced.yaml"), now=NOW, inputs={},
              run_info={"id": "r1"}, actions=actions, checkpoint=no_checkpoint)
    turns = 0

    async def other_run() -> None:
        nonlocal turns
        while True:
            await asyncio.sleep(0)
            turns += 1

    other = asyncio.create_task(other_run())
    await asyncio.sleep(0)  # let it begin
    before = turns
    outcome = await Interpreter(env).advance({})
    during = turns - before
    other.cancel()
    assert isinstance(outcome, Done)
    assert during == 2  # once after every budget's worth: after the 5th and the 10th step


def test_a_missing_key_of_a_megabyte_is_quoted_in_part_and_not_matched_against_the_keys(
        ) -> None:
    data = {f"key{n}": n for n in range(10_000)}
    with pytest.raises(ExpressionError) as caught:
        compile_template("{{ d[k] }}").render({"d": data, "k": "x" * 1_000_000}, CTX)
    assert caught.value.reason == f"'d' has no key '{'x' * 57}...'"


def test_a_close_key_is_still_suggested() -> None:
    with pytest.raises(ExpressionError) as caught:
        compile_template("{{ d[k] }}").render({"d": {"amount": 1}, "k": "amuont"}, CTX)
    assert caught.value.reason == "'d' has no key 'amuont' (did you mean 'amount'?)"


@pytest.mark.parametrize("source", HEAVY[:2])
async def test_a_run_whose_expression_hits_the_budget_fails_once_beside_good_runs(
        tmp_path: Path, store_url: str, source: str) -> None:
    with Harness(tmp_path, start=NOW, store_url=store_url) as harness:
        good = [harness.start(harness.flow("flow: good\nsteps:\n  - a: { set: { x: 1 } }\n",
                                           "good.yaml")) for _ in range(20)]
        heavy = harness.start(harness.flow(
            f"flow: heavy\nsteps:\n  - hungry:\n      set: {{ v: \"{source}\" }}\n"))
        await harness.run_until_idle()
        assert harness.record(heavy).error == {
            "type": "expression", "step": "hungry",
            "message": f"expression does too much work (more than 1,000,000 units): {source}"}
        assert harness.history_kinds(heavy).count("failed") == 1
        assert {harness.record(run).status for run in good} == {RunStatus.SUCCEEDED}


def test_a_few_hundred_objects_built_from_the_scope_are_written_out() -> None:
    items = _payload(150)["items"]  # 150 objects of three fields, one a list
    assert len(compile_template("{{ a + b }}").render({"a": items, "b": items}, CTX)) == 300
