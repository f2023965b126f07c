"""docs/flows.md shows only what works: its flows load and run as it says, its messages are real."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from textwrap import indent
from typing import Any

import pytest
from typer.testing import CliRunner

from markdown_blocks import (
    TARRY,
    Document,
    add_config,
    example_copy,
    fresh_project,
    run_console,
)
from tarry.cli import app
from tarry.errors import LoadError
from tarry.language.loader import parse_flow
from tarry.testing import Harness

REFERENCE = Document("docs/flows.md", __file__)
FLOWS = {flow.split()[1]: flow for flow in REFERENCE.blocks("yaml", starting="flow: ")}
INPUTS = REFERENCE.block("yaml", after="## Inputs")
INPUT_REFUSALS = REFERENCE.block("console", after="## Inputs")
STEP = REFERENCE.block("yaml", after="## Steps, ids and bindings")
USER_ACTION = REFERENCE.block("toml", after="### User actions")
PROVIDED = REFERENCE.block("toml", after="### Actions provided elsewhere")
DECLARED_ARGUMENTS = REFERENCE.block("python", after="### Arguments are checked at load")
WAITS = REFERENCE.block("yaml", after="either may be an expression:")
WAIT_FOR, WAIT_FOR_ANY = REFERENCE.blocks("yaml", after="### `wait_for`", before="### `repeat`")
ASK = REFERENCE.block("yaml", after="### `ask`")
VALIDATE = REFERENCE.block("console", after="Given this `flows/reminder.yaml`")
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
MANIFESTS = """\
events:
  slack.approval: { correlate_on: [message] }
  email.reply: { correlate_on: [ticket] }
  portal.reply: { correlate_on: [ticket] }
"""


def search_status(args: dict[str, Any], _ctx: object) -> dict[str, Any]:
    """A search service that has always indexed the document already."""
    return {"id": args["id"], "status": "indexed"}


def http_ok(args: dict[str, Any], _ctx: object) -> dict[str, Any]:
    """``http.request`` answered 200 without a network."""
    return {"status": 200, "headers": {}, "json": {"url": args["url"]}}


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    h = Harness(tmp_path, start=START,
                actions={"search.status": search_status, "http.request": http_ok})
    yield h
    h.close()


async def run(harness: Harness, name: str, inputs: dict[str, Any] | None = None) -> Any:
    """Run the reference's flow ``name`` to its end; its run document."""
    run_id = harness.start(harness.flow(FLOWS[name], f"flows/{name}.yaml"), inputs)
    await harness.run_until_idle()
    return harness.document(run_id)


def test_the_reference_shows_these_complete_flows() -> None:
    assert sorted(FLOWS) == ["account-deletion", "approval", "modifiers", "onboarding",
                             "provisioning", "reindex-ticket", "reminder", "vendor-check"]


@pytest.mark.parametrize("name", sorted(set(FLOWS) - {"reminder"}))
def test_each_complete_flow_loads(name: str) -> None:
    assert parse_flow(FLOWS[name], f"flows/{name}.yaml", actions={"search.status"}).name == name


async def test_the_file_shape_example_reminds_the_day_before(harness: Harness) -> None:
    hire = {"name": "Ada", "start_date": "2026-03-04T09:00:00Z"}
    document = await run(harness, "onboarding", {"hire": hire})
    assert document["exit"] == "onboarded"
    assert document["bindings"]["day_before"] == {"until": "2026-03-03T09:00:00.000Z"}


async def test_the_inputs_example_gives_every_optional_input_its_default(
        harness: Harness) -> None:
    flow = harness.flow(f"flow: inputs\n{INPUTS}steps:\n  - seen:\n      set: {{ interval: "
                        '"{{ interval }}", notify: "{{ notify }}", note: "{{ note }}" }\n')
    run_id = harness.start(flow, {"ticket": {"id": "T-1"}})
    await harness.run_until_idle()
    assert harness.document(run_id)["bindings"]["seen"] == {
        "interval": "30s", "notify": True, "note": None}


def test_the_input_refusals_are_what_tarry_run_says(tmp_path: Path) -> None:
    run_console(INPUT_REFUSALS, example_copy("waiting", tmp_path))


async def test_the_step_example_binds_its_id_to_the_result(harness: Harness) -> None:
    flow = harness.flow(f"flow: greeting\ninputs:\n  name: {{ default: Ada }}\n{STEP}")
    run_id = harness.start(flow)
    await harness.run_until_idle()
    assert harness.document(run_id)["bindings"]["greet"] == {"message": "Hello, Ada!"}


def test_the_user_action_declaration_runs_the_polling_example(tmp_path: Path) -> None:
    folder = example_copy("waiting", tmp_path)
    (folder / "tarry.toml").write_text(USER_ACTION, encoding="utf-8")
    result = subprocess.run([str(TARRY), "run", "reindex-ticket", "--inputs",
                             '{"ticket": {"id": "T-1"}}'], cwd=folder,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "waiting to poll again at step 'indexed'" in result.stdout  # polled once, and waits


def test_actions_provided_elsewhere_load_and_fail_where_nothing_provides_them(
        tmp_path: Path) -> None:
    root = fresh_project(tmp_path / "p")
    add_config(root, PROVIDED)
    (root / "flows" / "pay.yaml").write_text(
        "flow: pay\nsteps:\n  - charge: { billing.charge: { amount: 5 } }\n", encoding="utf-8")
    assert subprocess.run([str(TARRY), "validate"], cwd=root, capture_output=True,
                          timeout=60, check=False).returncode == 0
    result = subprocess.run([str(TARRY), "run", "pay"], cwd=root, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 1
    assert ("action 'billing.charge' is provided elsewhere (provided_actions in tarry.toml) and "
            "nothing provides it here: ") in result.stdout + result.stderr


async def test_the_wait_examples_wait_until_the_day_before_then_for_the_interval(
        harness: Harness) -> None:
    flow = harness.flow("flow: waits\ninputs:\n  hire: { type: object }\n"
                        f"  interval: {{ type: duration }}\nsteps:\n{indent(WAITS, '  ')}")
    run_id = harness.start(flow, {"hire": {"start_date": "2026-03-04T09:00:00Z"},
                                  "interval": "1h"})
    await harness.run_until_idle()
    assert harness.document(run_id)["bindings"] == {
        "day_before": {"until": "2026-03-03T09:00:00.000Z"},
        "pause": {"until": "2026-03-03T10:00:00.000Z"}}


def event_harness(tmp_path: Path) -> Harness:
    """A harness with the event types the ``wait_for`` examples use, and ``slack.post``."""
    return Harness(tmp_path, start=START, manifests=MANIFESTS,
                   actions={"slack.post": lambda _args, _ctx: {"ts": "1700.1"}})


def around(steps: str) -> str:
    """A flow of the ``wait_for`` examples' inputs around ``steps`` (a list of steps)."""
    return f"flow: f\ninputs:\n  deal: {{}}\n  ticket: {{}}\nsteps:\n{indent(steps, '  ')}"


async def test_the_wait_for_example_resumes_with_the_approval(tmp_path: Path) -> None:
    harness = event_harness(tmp_path)
    run_id = harness.start(harness.flow(around(WAIT_FOR)), {"deal": {"name": "ACME"}})
    await harness.run_due()
    harness.send("slack.approval", {"message": "1700.1", "approved": True})
    await harness.run_until_idle()
    binding = harness.document(run_id)["bindings"]["approval"]
    harness.close()
    assert (binding["status"], binding["event"]) == (
        "received", {"message": "1700.1", "approved": True})


async def test_the_any_example_takes_the_first_of_its_events(tmp_path: Path) -> None:
    harness = event_harness(tmp_path)
    run_id = harness.start(harness.flow(around(WAIT_FOR_ANY)), {"ticket": {"id": "T-9"}})
    await harness.run_due()
    harness.send("portal.reply", {"ticket": "T-9"})
    await harness.run_until_idle()
    binding = harness.document(run_id)["bindings"]["reply"]
    harness.close()
    assert (binding["status"], binding["type"]) == ("received", "portal.reply")


async def test_the_ask_example_opens_its_task(harness: Harness) -> None:
    run_id = harness.start(harness.flow(f"flow: refund\nsteps:\n{ASK}"), target="R-1")
    await harness.run_due()
    task = harness.task(run_id, "review")
    assert (task.request.title, task.request.assign, task.request.outcomes) == (
        "Approve the refund of R-1?", ("finance",), ("approve", "reject"))


async def test_the_modifiers_example(harness: Harness) -> None:
    document = await run(harness, "modifiers")
    assert document["exit"] == "completed"
    assert document["bindings"]["perk"] == {"skipped": True}
    assert document["bindings"]["summary"] == {"had_perk": False, "best_effort_failed": True}


async def test_the_wait_example_waits_two_days(harness: Harness) -> None:
    document = await run(harness, "account-deletion", {"account": "acct_42"})
    assert document["bindings"]["cooling_off"] == {"until": "2026-03-03T09:00:00.000Z"}


async def test_the_repeat_example_stops_when_until_holds(harness: Harness) -> None:
    document = await run(harness, "reindex-ticket", {"ticket": {"id": "T-1"}})
    assert document["bindings"]["indexed"] == [{"check": {"id": "T-1", "status": "indexed"}}]


async def test_the_for_each_example_binds_one_scope_per_item(harness: Harness) -> None:
    document = await run(harness, "vendor-check", {"vendors": ["acme", "globex"]})
    assert document["bindings"]["replies"][1] == {
        "answer": {"message": "Asking globex (item 1)"}}
    assert document["bindings"]["count"] == {"asked": 2}


async def test_the_recover_example_logs_what_the_reference_says(harness: Harness) -> None:
    document = await run(harness, "provisioning")
    assert document["bindings"]["after"] == {"message": "attempt.confirm failed: slot 7 is gone"}


@pytest.mark.parametrize(("amount", "status", "ending"), [
    (50, "succeeded", "auto-approved"),
    (500, "succeeded", "approved"),
    (20000, "failed", "amount 20000 needs a manual review"),
])
async def test_the_exit_and_fail_example(harness: Harness, amount: int, status: str,
                                         ending: str) -> None:
    document = await run(harness, "approval", {"amount": amount})
    assert document["status"] == status
    assert (document["exit"] or document["error"]["message"]) == ending


async def test_backoff_pauses_grow_as_the_reference_says(harness: Harness) -> None:
    flow = harness.flow("""
flow: backoff
steps:
  - p:
      repeat: { backoff: { initial: 10s, max_delay: 1m, rate: 3 }, max: 5, until: "{{ false }}" }
      steps:
        - c: { set: { n: "{{ loop.index }}" } }
""")
    run_id = harness.start(flow)
    await harness.run_until_idle()
    resumed = [entry["at"] for entry in harness.document(run_id)["history"]
               if entry["kind"] == "resumed"]
    pauses = [timedelta(seconds=s) for s in (10, 10 + 30, 10 + 30 + 60, 10 + 30 + 60 + 60)]
    assert resumed == [(START + p).isoformat(timespec="milliseconds").replace("+00:00", "Z")
                       for p in pauses]


def test_the_validate_output_is_what_tarry_validate_prints(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shown = VALIDATE.splitlines()
    root = fresh_project(tmp_path / "p")
    (root / "flows" / "reminder.yaml").write_text(FLOWS["reminder"], encoding="utf-8")
    monkeypatch.chdir(root)
    result = CliRunner().invoke(app, ["validate"])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == shown[1:-1]
    assert result.stderr.splitlines() == shown[-1:]


MISTAKES = {
    "unknown key 'step' at flow level (did you mean 'steps'?)":
        "flow: x\nstep:\n  - a: { log: hi }\n",
    "a step is written '- <id>: <body>', got 2 keys ('a', 'log'); indent the body under the id":
        "flow: x\nsteps:\n  - a:\n    log: hi\n",
    "step 'a' has 2 constructs ('log', 'wait'); a step holds exactly one":
        "flow: x\nsteps:\n  - a: { log: hi, wait: { for: 1s } }\n",
    "duplicate step id 'a' in this scope (first at line 3)":
        "flow: x\nsteps:\n  - a: { log: hi }\n  - a: { log: hi }\n",
    "step id 'loop' is a reserved name (env, error, event, item, loop, now, run)":
        "flow: x\nsteps:\n  - loop: { log: hi }\n",
    "'retry' is only allowed on action steps":
        "flow: x\nsteps:\n  - a: { wait: { for: 1s }, retry: { max: 2, every: 1s } }\n",
    "missing 'max' in 'repeat' (a repeat is always bounded)":
        "flow: x\nsteps:\n  - a:\n      repeat: { every: 1s, until: '{{ b.ok }}' }\n"
        "      steps:\n        - b: { set: { ok: true } }\n",
    "'until' must be one {{ … }} expression, such as \"{{ check.status == 'done' }}\", "
    "got 'b.ok'":
        "flow: x\nsteps:\n  - a:\n      repeat: { every: 1s, max: 3, until: 'b.ok' }\n"
        "      steps:\n        - b: { set: { ok: true } }\n",
    "undefined name 'b'":
        "flow: x\nsteps:\n  - a: { log: '{{ b.x }}' }\n  - b: { set: { x: 1 } }\n",
    "undefined name 'loop' ('loop' is only defined inside repeat and for_each)":
        "flow: x\nsteps:\n  - a: { log: '{{ loop.index }}' }\n",
    "'2026-02-31T00:00:00Z' is not a real date and time (day is out of range for month)":
        "flow: x\nsteps:\n  - a: { wait: { until: '2026-02-31T00:00:00Z' } }\n",
    "duration 'P1M' uses months or years, whose length is ambiguous; use days or weeks":
        "flow: x\nsteps:\n  - a: { wait: { for: P1M } }\n",
    "duration 'P99999999999W' is longer than 100 years (36525d), the longest tarry accepts":
        "flow: x\nsteps:\n  - a: { wait: { for: P99999999999W } }\n",
    "unknown timezone 'Europe/Berln' (did you mean 'Europe/Berlin'?)":
        "flow: x\ntimezone: Europe/Berln\nsteps:\n  - a: { log: hi }\n",
    "'optional' must be true or false, got 'yes'":
        "flow: x\nsteps:\n  - a: { log: hi, optional: yes }\n",
}


def test_the_message_table_lists_these_mistakes() -> None:
    table = REFERENCE.text[REFERENCE.text.index("| mistake | message |"):]
    table = table[:table.index("\n\n")]  # the table alone, not those of later sections
    shown = [line.rsplit("| `", 1)[1].removesuffix("` |")
             for line in table.splitlines()[2:] if line.startswith("|")]
    assert shown == list(MISTAKES)


@pytest.mark.parametrize(("message", "source"), MISTAKES.items(), ids=range(len(MISTAKES)))
def test_each_mistake_gives_its_message(message: str, source: str) -> None:
    with pytest.raises(LoadError) as refused:
        parse_flow(source, "flows/x.yaml")
    assert [problem.message for problem in refused.value.problems] == [message]


def test_the_argument_refusals_table_is_what_loading_says() -> None:
    section = REFERENCE.text[REFERENCE.text.index("### Arguments are checked at load"):]
    rows = [line.split(" | ") for line in section.splitlines()[:15]
            if line.startswith("| `") and "refused with" not in line]
    assert len(rows) == 5
    for step, refusal in ((row[0].removeprefix("| `").removesuffix("`"),
                           row[1].strip(" |`")) for row in rows):
        source = ("flow: args\nsteps:\n  - one:\n      "
                  + step.replace("…", '"http://example.org"') + "\n")
        with pytest.raises(LoadError) as refused:
            parse_flow(source, "flow.yaml")
        assert [p.message for p in refused.value.problems] == [refusal]


def test_a_user_action_declaring_its_arguments_as_printed_gets_them_checked() -> None:
    namespace: dict[str, Any] = {}
    exec(DECLARED_ARGUMENTS, namespace)
    with pytest.raises(LoadError) as refused:
        parse_flow("flow: ping\nsteps:\n  - ask: { notify: { chanel: ops } }\n", "flow.yaml",
                   actions={"notify": namespace["notify"].arguments})
    assert [p.message for p in refused.value.problems] == [
        "unknown argument 'chanel' of action 'notify' (did you mean 'channel'?)"]
