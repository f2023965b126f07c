"""docs/holds.md: its flows load, and the messages it quotes are the ones tarry prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tarry.errors import LoadError
from tarry.language.loader import parse_flow

DOC = (Path(__file__).resolve().parents[2] / "docs" / "holds.md").read_text(encoding="utf-8")
YAML_BLOCKS = re.findall(r"^```yaml\n(.*?)^```", DOC, re.MULTILINE | re.DOTALL)

BODY = "steps:\n  - a: { log: x }\n"
MISTAKES = {
    "`hold: []`": "hold: []\n",
    "a fifth condition": "hold:\n" + "".join(f"  - check: {n}\n" for n in "abcde"),
    "two keys in one condition":
        'hold:\n  - { after: "2026-09-01T09:00:00Z", check: jira }\n',
    "an unknown key": "hold:\n  - wait: jira\n",
    "a near miss of `hold`": "holds:\n  - check: jira\n",
    "a zone-less `after`": 'hold:\n  - after: "2026-09-01T09:00:00"\n',
    "an impossible date": 'hold:\n  - after: "2026-02-31T09:00:00Z"\n',
    "two `after`s":
        'hold:\n  - after: "2026-09-01T09:00:00Z"\n  - after: "2026-09-02T09:00:00Z"\n',
    "the same check twice": "hold:\n  - check: jira\n  - check: jira\n",
}


@pytest.mark.parametrize("source", YAML_BLOCKS)
def test_every_flow_of_the_page_loads(source: str) -> None:
    assert parse_flow(source, "doc.yaml").name


def test_the_page_shows_its_flows() -> None:
    assert len(YAML_BLOCKS) == 2


@pytest.mark.parametrize(("mistake", "hold"), MISTAKES.items())
def test_each_quoted_load_message_is_the_loaders(mistake: str, hold: str) -> None:
    with pytest.raises(LoadError) as caught:
        parse_flow(f"flow: deploy\n{hold}{BODY}", "deploy.yaml")

    message = caught.value.problems[0].message
    assert f"| {mistake} | `{message}` |" in DOC
