"""Load-time checks of a flow's events against the declared manifests (SPEC 3.4).

Each rule is shown with the bad input and the exact ``line:col: message`` it is refused with;
``steps(...)`` snippets start on line 3 of the file, shifted by 2 columns.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent, indent

import pytest

from tarry.engine.catalog import FlowCatalog
from tarry.errors import LoadError
from tarry.language.loader import load_flow, parse_flow
from tarry.language.manifests import parse_manifests
from tarry.store.base import Store

FILE = "flow.yaml"
MANIFESTS = parse_manifests(dedent("""
    events:
      slack.approval:
        correlate_on: [message]
      chat.reply:
        correlate_on: [message, thread]
      email.reply:
        correlate_on: [ticket]
    """), "events.yaml")


def steps(text: str) -> str:
    """A flow named ``f`` whose ``steps:`` list is ``text``."""
    return f"flow: f\nsteps:\n{indent(dedent(text).lstrip(chr(10)), '  ')}"


def problems(source: str) -> list[str]:
    """What ``source`` is refused for, checked against MANIFESTS: ``line:col: message``."""
    with pytest.raises(LoadError) as caught:
        parse_flow(source, FILE, manifests=MANIFESTS)
    return [str(problem).removeprefix(f"{FILE}:") for problem in caught.value.problems]


APPROVAL = steps("""
    - approval:
        wait_for: slack.approval
        match: { message: "{{ run.id }}" }
        timeout: 1h
    """)


def test_a_flow_that_uses_declared_types_and_keys_loads() -> None:
    assert parse_flow(APPROVAL, FILE, manifests=MANIFESTS).name == "f"


def test_a_misspelt_event_type_is_refused_with_a_suggestion() -> None:
    assert problems(APPROVAL.replace("wait_for: slack.approval", "wait_for: slack.aproval")) == [
        "4:17: unknown event type 'slack.aproval' (did you mean 'slack.approval'?)"]


def test_an_undeclared_event_type_says_where_to_declare_it() -> None:
    assert problems(APPROVAL.replace("wait_for: slack.approval", "wait_for: deploy.done")) == [
        "4:17: unknown event type 'deploy.done'; declare it under 'events:' in an event "
        "manifest (events.yaml)"]


def test_a_wait_for_without_match_is_refused() -> None:
    source = steps("""
        - approval:
            wait_for: slack.approval
            timeout: 1h
        """)
    assert problems(source) == [
        "4:7: missing 'match' in step 'approval' (event type 'slack.approval' correlates on "
        "message)"]


def test_a_match_missing_a_correlation_key_is_refused() -> None:
    source = steps("""
        - reply:
            wait_for: chat.reply
            match: { message: "m-1" }
            timeout: 1h
        """)
    assert problems(source) == [
        "5:14: missing 'thread' in 'match' (event type 'chat.reply' correlates on message, "
        "thread)"]


def test_a_match_key_the_manifest_does_not_declare_is_refused() -> None:
    source = steps("""
        - approval:
            wait_for: slack.approval
            match: { message: "m-1", channel: "#ops" }
            timeout: 1h
        """)
    assert problems(source) == [
        "5:32: unknown key 'channel' in 'match' (event type 'slack.approval' correlates on "
        "message)"]


def test_a_misspelt_match_key_is_suggested_and_not_reported_missing_too() -> None:
    source = steps("""
        - approval:
            wait_for: slack.approval
            match:
              mesage: "m-1"
            timeout: 1h
        """)
    assert problems(source) == ["6:9: unknown key 'mesage' in 'match' (did you mean 'message'?)"]


def test_each_any_alternative_is_checked_against_its_own_type() -> None:
    source = steps("""
        - reply:
            wait_for:
              any:
                - { event: email.reply, match: { ticket: "T-1" } }
                - { event: chat.reply, match: { message: "m-1" } }
                - { event: email.replies, match: { ticket: "T-1" } }
                - { event: email.reply }
            timeout: 1h
        """)
    assert problems(source) == [
        "7:41: missing 'thread' in 'match' (event type 'chat.reply' correlates on message, "
        "thread)",
        "8:22: unknown event type 'email.replies' (did you mean 'email.reply'?)",
        "9:13: missing 'match' in an 'any' alternative (event type 'email.reply' correlates "
        "on ticket)"]


def test_a_type_that_is_not_a_name_is_reported_once() -> None:
    assert problems(APPROVAL.replace("wait_for: slack.approval", "wait_for: Slack Approval")) == [
        "4:17: 'wait_for' must be a name matching [a-z0-9][a-z0-9_.-]*, got 'Slack Approval'"]


def test_an_emit_of_an_undeclared_literal_type_is_refused() -> None:
    source = steps("""
        - tell:
            emit: { type: slack.aproval, data: { message: "m-1" } }
        """)
    assert problems(source) == [
        "4:21: unknown event type 'slack.aproval' (did you mean 'slack.approval'?)"]


def test_an_emit_of_a_computed_type_is_checked_when_sent() -> None:
    source = steps("""
        - tell:
            emit: { type: "{{ run.target }}", data: { message: "m-1" } }
        """)
    assert parse_flow(source, FILE, manifests=MANIFESTS).name == "f"


def test_without_manifests_event_types_are_not_checked() -> None:
    source = APPROVAL.replace("wait_for: slack.approval", "wait_for: deploy.done")
    assert parse_flow(source, FILE).name == "f"


def test_empty_manifests_declare_no_type() -> None:
    with pytest.raises(LoadError) as caught:
        parse_flow(APPROVAL, FILE, manifests={})
    assert [p.message for p in caught.value.problems] == [
        "unknown event type 'slack.approval'; declare it under 'events:' in an event manifest "
        "(events.yaml)"]


def test_load_flow_checks_against_the_manifests_it_is_given(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(APPROVAL.replace("message:", "messages:"), encoding="utf-8")
    with pytest.raises(LoadError) as caught:
        load_flow(path, manifests=MANIFESTS)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:5:16: unknown key 'messages' in 'match' (did you mean 'message'?)"]


def test_the_catalog_checks_flows_it_resolves_but_not_flows_runs_started_with(
        tmp_path: Path, store: Store) -> None:
    undeclared = APPROVAL.replace("slack.approval", "deploy.done")
    (tmp_path / "f.yaml").write_text(undeclared, encoding="utf-8")
    catalog = FlowCatalog(tmp_path, store, (), MANIFESTS)
    with pytest.raises(LoadError) as refused:
        catalog.resolve("f")
    assert [p.message for p in refused.value.problems] == [
        "unknown event type 'deploy.done'; declare it under 'events:' in an event manifest "
        "(events.yaml)"]
    started = parse_flow(undeclared, FILE)
    store.save_flow(started.digest, started.name, started.source)
    assert catalog.by_digest(started.digest).name == "f"


# --- what docs/events.md and docs/flows.md show -----------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs"

DOCUMENTED_MISTAKES = {
    "unknown event type 'slack.aproval' (did you mean 'slack.approval'?)":
        APPROVAL.replace("wait_for: slack.approval", "wait_for: slack.aproval"),
    "unknown event type 'deploy.done'; declare it under 'events:' in an event manifest "
    "(events.yaml)":
        APPROVAL.replace("wait_for: slack.approval", "wait_for: deploy.done"),
    "missing 'match' in step 'approval' (event type 'slack.approval' correlates on message)":
        APPROVAL.replace('      match: { message: "{{ run.id }}" }\n', ""),
    "missing 'thread' in 'match' (event type 'chat.reply' correlates on message, thread)":
        APPROVAL.replace("slack.approval", "chat.reply"),
    "unknown key 'channel' in 'match' (event type 'slack.approval' correlates on message)":
        APPROVAL.replace('message: "{{ run.id }}"', 'message: m, channel: c'),
    "unknown key 'mesage' in 'match' (did you mean 'message'?)":
        APPROVAL.replace("message:", "mesage:"),
}


def test_the_events_page_lists_these_load_time_messages() -> None:
    text = (DOCS / "events.md").read_text(encoding="utf-8")
    table = text[text.index("| mistake | message |"):].split("\n\n")[0]
    shown = [line.rsplit("| `", 1)[1].removesuffix("` |")
             for line in table.splitlines()[2:]]
    assert shown == list(DOCUMENTED_MISTAKES)


@pytest.mark.parametrize(("message", "source"), DOCUMENTED_MISTAKES.items(),
                         ids=range(len(DOCUMENTED_MISTAKES)))
def test_each_documented_mistake_gives_its_message(message: str, source: str) -> None:
    assert [line.split(": ", 1)[1] for line in problems(source)] == [message]


