"""Reading a Python flow's source finds, before any run, the mistakes a YAML flow is refused
for at load: undeclared literal event types, match keys that are not the manifest's, malformed
literal durations, and an operation name used twice."""

from __future__ import annotations

from pathlib import Path

import pytest
import static_flows

from tarry.errors import LoadError
from tarry.language.manifests import parse_manifests

HERE = Path(static_flows.__file__)
MANIFESTS = parse_manifests("events:\n  order.approval: { correlate_on: [order] }\n",
                            "events.yaml")

TYPOS = [
    f"{HERE}:10:35: flow 'typos': ctx.wait: '2dd' is not a duration (use e.g. 500ms, 30s, "
    "15m, 24h, 2d, 1w, 1h30m or ISO 8601 like PT30S)",
    f"{HERE}:11:50: flow 'typos': ctx.wait_for_event: unknown event type 'order.aproval' "
    "(did you mean 'order.approval'?); declare it in an event manifest (events.yaml)",
    f"{HERE}:13:63: flow 'typos': ctx.wait_for_event: match must give exactly the "
    "correlate_on keys of 'order.approval' (order), got ordr",
    f"{HERE}:14:38: flow 'typos': ctx.wait_for_event: duration '1y' uses months or years, "
    "whose length is ambiguous; use days or weeks",
    f"{HERE}:15:20: flow 'typos': operation name 'cooling-off' is used twice; each operation "
    "of a flow needs a name of its own",
]


def test_every_literal_mistake_is_found_with_its_position() -> None:
    assert [str(problem) for problem in static_flows.app.problems(MANIFESTS)] == TYPOS


def test_without_manifests_event_types_are_not_checked() -> None:
    assert [str(p) for p in static_flows.app.problems(None)] == [TYPOS[0], TYPOS[3], TYPOS[4]]


def test_loading_the_app_refuses_it_with_every_problem() -> None:
    with pytest.raises(LoadError) as refused:
        static_flows.app.programs(MANIFESTS)
    assert [str(problem) for problem in refused.value.problems] == TYPOS


def test_names_in_two_arms_computed_names_and_instants_are_left_alone() -> None:
    from tarry import App  # noqa: PLC0415

    only_fine = App()
    only_fine.flow("fine")(static_flows.fine)
    assert only_fine.problems(MANIFESTS) == []


def test_a_malformed_literal_patch_id_is_found_and_one_id_may_be_asked_twice() -> None:
    rule = ("is invalid: use 1 to 100 letters, digits, '.', '_' or '-', beginning with a "
            "letter or digit, such as 'new-tax-rule'")
    assert [str(problem) for problem in static_flows.patch_app.problems(MANIFESTS)] == [
        f"{HERE}:37:25: flow 'patches': ctx.deprecate_patch: patch id 'old tax' {rule}",
        f"{HERE}:39:28: flow 'patches': ctx.patched: patch id '-rounding' {rule}",
    ]
