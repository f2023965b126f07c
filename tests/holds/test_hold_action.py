"""The built-in ``check`` action: one check under the hold contract, from inside a flow."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hold_support import T0, script

from tarry.config import Limits
from tarry.errors import LoadError
from tarry.model import RunStatus
from tarry.testing import Harness

pytestmark = pytest.mark.slow  # real check processes

POLL = """
flow: ticket
steps:
  - ticket:
      repeat: { every: 1m, max: 5, until: "{{ asked.status == 'go' }}" }
      steps:
        - asked: { check: { name: jira } }
"""

ONCE = """
flow: ticket
steps:
  - asked: { check: NAME }
"""


@pytest.fixture
def counter(tmp_path: Path) -> Path:
    """A file the check scripts count their calls in."""
    return tmp_path / "calls"


@pytest.fixture
def harness(tmp_path: Path, store_url: str, counter: Path) -> Iterator[Harness]:
    checks = {
        "jira": script(tmp_path / "checks", "jira.sh",
                       f'echo "$1" >> "{counter}"; '
                       f'[ "$(wc -l < "{counter}")" -ge 3 ] && exit 0; exit 3'),
        "never": script(tmp_path / "checks", "never.sh", "exit 2"),
        "broken": script(tmp_path / "checks", "broken.sh", "exit 1"),
    }
    h = Harness(tmp_path / "h", start=T0, store_url=store_url, checks=checks,
                limits=Limits(check_timeout=timedelta(milliseconds=500)))
    yield h
    h.close()


async def test_a_repeat_polls_a_check_until_it_says_go(harness: Harness, counter: Path) -> None:
    run = harness.start(harness.flow(POLL), target="acme/web#7")

    await harness.run_until_idle()

    document = harness.document(run)
    assert document["status"] == "succeeded"
    assert [iteration["asked"] for iteration in document["bindings"]["ticket"]] == [
        {"status": "not_yet", "exit": 3}, {"status": "not_yet", "exit": 3},
        {"status": "go", "exit": 0}]
    assert counter.read_text().split() == ["acme/web#7"] * 3


@pytest.mark.parametrize(("name", "binding"), [
    ("never", {"status": "never", "exit": 2}),
    ("broken", {"status": "unknown", "exit": 1}),
])
async def test_every_answer_is_a_binding_not_a_failure(harness: Harness, name: str,
                                                      binding: dict[str, object]) -> None:
    run = harness.start(harness.flow(ONCE.replace("NAME", f"{{ name: {name} }}")))

    await harness.run_until_idle()

    document = harness.document(run)
    assert (document["status"], document["bindings"]["asked"]) == ("succeeded", binding)


async def test_an_undeclared_check_fails_the_step_with_a_suggestion(harness: Harness) -> None:
    run = harness.start(harness.flow(ONCE.replace("NAME", "{ name: jiar }")))

    await harness.run_until_idle()

    record = harness.record(run)
    assert record.status is RunStatus.FAILED
    assert record.error == {
        "type": "check-unknown", "step": "asked",
        "message": "check 'jiar' is not declared (did you mean 'jira'?); declare it in "
                   "[checks] of tarry.toml or in TARRY_CHECKS"}


@pytest.mark.parametrize(("args", "problem"), [
    ("{ name: jira, target: x }", "flow.yaml:4:35: unknown argument 'target' of action 'check'"),
    ("{ }", "flow.yaml:4:21: action 'check' needs the argument 'name'"),
])
def test_a_check_step_with_bad_arguments_is_refused_at_load(harness: Harness, args: str,
                                                            problem: str) -> None:
    with pytest.raises(LoadError) as caught:
        harness.flow(ONCE.replace("NAME", args))
    assert [str(p) for p in caught.value.problems] == [problem]


async def test_with_every_slot_taken_the_answer_is_unknown_and_nothing_runs(
        harness: Harness) -> None:
    harness.engine.store.acquire_check_slot("elsewhere", T0, T0 + timedelta(hours=1), 1)
    run = harness.start(harness.flow(ONCE.replace("NAME", "{ name: jira }")))

    await harness.run_until_idle()

    assert harness.document(run)["bindings"]["asked"] == {"status": "unknown", "exit": None}
    assert harness.engine.holds.runner.spawned == 0
