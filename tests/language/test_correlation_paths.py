"""``correlate_on`` paths: top-level names or key names mapped to dotted paths into the
payload, what a payload needs at each path, and what is refused at load."""

from __future__ import annotations

from textwrap import dedent
from typing import Any

import pytest

from tarry.errors import LoadError
from tarry.language.manifests import Manifest, correlation_key, parse_manifests

GITHUB = dedent("""\
    events:
      github.issues:
        correlate_on: { issue: issue.number, repo: repository.full_name }
      slack.action:
        correlate_on: { message: container.message_ts, button: actions.0.value }
      flat.reply:
        correlate_on: [ticket]
    """)
LABELED = {"action": "labeled", "issue": {"number": 7, "title": "Deploy"},
           "repository": {"full_name": "acme/web"}, "label": {"name": "deploy"}}


def _manifest(name: str) -> Manifest:
    return parse_manifests(GITHUB, "events.yaml")[name]


def _problems(text: str) -> list[str]:
    with pytest.raises(LoadError) as caught:
        parse_manifests(dedent(text), "events.yaml")
    return [str(problem) for problem in caught.value.problems]


def test_a_mapping_gives_key_names_and_their_paths() -> None:
    manifest = _manifest("github.issues")
    assert manifest.correlate_on == ("issue", "repo")
    assert manifest.path_of("issue") == ("issue", "number")
    assert manifest.values_of(LABELED) == {"issue": 7, "repo": "acme/web"}
    assert manifest.problems(LABELED) == []


def test_a_list_names_top_level_fields_and_keys_as_before() -> None:
    manifest = _manifest("flat.reply")
    assert (manifest.correlate_on, manifest.path_of("ticket")) == (("ticket",), ("ticket",))
    assert manifest.key_of({"ticket": "T1"}) == correlation_key({"ticket": "T1"})


def test_a_path_key_is_the_key_a_match_of_the_same_values_gives() -> None:
    assert _manifest("github.issues").key_of(LABELED) == correlation_key(
        {"issue": "7", "repo": "acme/web"})


def test_a_digit_segment_is_an_item_of_a_list() -> None:
    click = {"container": {"message_ts": "1700000000.100"},
             "actions": [{"value": "approve"}, {"value": "reject"}]}
    assert _manifest("slack.action").values_of(click) == {"message": "1700000000.100",
                                                          "button": "approve"}


@pytest.mark.parametrize(("payload", "problem"), [
    ({"repository": {"full_name": "acme/web"}}, "missing correlation field 'issue.number'"),
    ({"issue": 7, "repository": {"full_name": "acme/web"}},
     "missing correlation field 'issue.number'"),
    ({"issue": [{"number": 7}], "repository": {"full_name": "acme/web"}},
     "missing correlation field 'issue.number'"),
    ({"issue": {"number": None}, "repository": {"full_name": "acme/web"}},
     "correlation field 'issue.number' is null; it must be a string, a number or a boolean"),
    ({"issue": {"number": {"id": 7}}, "repository": {"full_name": "acme/web"}},
     "correlation field 'issue.number' is an object; it must be a string, a number or a "
     "boolean"),
    ({"issue": {"number": [7]}, "repository": {"full_name": "acme/web"}},
     "correlation field 'issue.number' is a list; it must be a string, a number or a boolean"),
])
def test_a_payload_without_a_value_at_a_path_is_invalid_with_the_path_named(
        payload: dict[str, Any], problem: str) -> None:
    assert _manifest("github.issues").problems(payload) == [problem]


def test_a_list_item_past_the_end_is_missing() -> None:
    click = {"container": {"message_ts": "1"}, "actions": []}
    assert _manifest("slack.action").problems(click) == [
        "missing correlation field 'actions.0.value'"]


@pytest.mark.parametrize(("text", "problem"), [
    ("""\
     events:
       gh:
         correlate_on: [issue.number]
     """, "events.yaml:3:20: 'correlate_on' lists top-level payload fields, and "
          "'issue.number' is a path: give it a key name, e.g. correlate_on: "
          "{number: issue.number}"),
    ("""\
     events:
       gh:
         correlate_on: { issue: issue..number }
     """, "events.yaml:3:28: correlation key 'issue': 'issue..number' has an empty segment: "
          "write the field names with one dot between each (e.g. issue.number)"),
    ("""\
     events:
       gh:
         correlate_on: { issue: "issue.num ber" }
     """, "events.yaml:3:28: correlation key 'issue': 'issue.num ber': the segment 'num ber' "
          "holds a character other than letters, digits, '_' and '-'"),
    ("""\
     events:
       gh:
         correlate_on: { issue: [issue, number] }
     """, "events.yaml:3:28: the path of correlation key 'issue' must be a dotted path into "
          "the payload (e.g. issue.number)"),
    ("""\
     events:
       gh:
         correlate_on: { 9lives: cat.lives }
     """, "events.yaml:3:21: '9lives' is not a correlation key name (letters, digits, '_' and "
          "'-', not starting with a digit)"),
    ("""\
     events:
       gh:
         correlate_on: [ticket, ticket]
     """, "events.yaml:3:19: 'correlate_on' names a field twice"),
    ("""\
     events:
       gh:
         correlate_on: ["ti cket"]
     """, "events.yaml:3:20: 'ti cket' is not a payload field name (letters, digits, '_' and "
          "'-', not starting with a digit)"),
    ("""\
     events:
       gh:
         correlate_on: {}
     """, "events.yaml:3:19: 'correlate_on' must be a list of one or more top-level payload "
          "field names, or a mapping of key names to paths (e.g. {issue: issue.number})"),
])
def test_a_bad_correlate_on_is_refused_at_its_place(text: str, problem: str) -> None:
    assert _problems(text) == [problem]


SCHEMA = """\
events:
  github.issues:
    correlate_on: {{ issue: {path} }}
    schema:
      type: object
      required: [issue]
      properties:
        action: {{ type: string }}
        issue:
          type: object
          additionalProperties: false
          properties:
            number: {{ type: integer }}
            labels: {{ type: array }}
            title: {{ type: string }}
"""


@pytest.mark.parametrize(("path", "problem"), [
    ("issue.numbr", "the schema allows no field 'numbr' in 'issue' (did you mean 'number'?)"),
    ("action.name", "the schema declares 'action' of type string"),
    ("issue.labels", "the schema declares 'issue.labels' of type array, not a string, a "
                     "number or a boolean"),
    ("issue.title.0", "the schema declares 'issue.title' of type string"),
])
def test_a_path_the_schema_proves_absent_is_refused_at_load(path: str, problem: str) -> None:
    assert _problems(SCHEMA.format(path=path)) == [
        f"events.yaml:3:28: event type 'github.issues': no valid payload has a correlation "
        f"value at '{path}': {problem}"]


@pytest.mark.parametrize("path", ["issue.number", "issue.labels.0", "repository.full_name"])
def test_a_path_the_schema_allows_or_leaves_open_loads(path: str) -> None:
    manifest = parse_manifests(SCHEMA.format(path=path), "events.yaml")["github.issues"]
    assert manifest.path_of("issue") == tuple(path.split("."))


def test_a_path_into_a_field_the_schema_forbids_is_refused() -> None:
    assert _problems("""\
        events:
          gh:
            correlate_on: { issue: issue.number }
            schema: { type: object, properties: { issue: false } }
        """) == ["events.yaml:3:28: event type 'gh': no valid payload has a correlation value "
                 "at 'issue.number': the schema allows nothing at 'issue'"]
