"""``concurrency:`` is read strictly: every problem with its position and, where one helps,
a suggestion."""

from __future__ import annotations

import pytest

from tarry.errors import LoadError
from tarry.language.loader import parse_flow
from tarry.language.model import Concurrency, Template

HEAD = """\
flow: deploy
inputs:
  repo: { type: string }
"""
STEPS = """\
steps:
  - a: { log: { message: hi } }
"""


def _problems(concurrency: str) -> list[str]:
    with pytest.raises(LoadError) as caught:
        parse_flow(HEAD + concurrency + STEPS, "deploy.yaml")
    return [str(problem) for problem in caught.value.problems]


def test_a_key_may_name_the_inputs_run_and_target() -> None:
    flow = parse_flow(HEAD + 'concurrency: { key: "{{ repo }}/{{ target }}/{{ run.id }}", '
                             "limit: 2 }\n" + STEPS, "deploy.yaml")
    assert flow.concurrency is not None
    assert flow.concurrency.key == Template("{{ repo }}/{{ target }}/{{ run.id }}")
    assert flow.concurrency.limit == 2


def test_without_a_key_the_flow_has_one_key() -> None:
    flow = parse_flow(HEAD + "concurrency: { limit: 3 }\n" + STEPS, "deploy.yaml")
    assert flow.concurrency is not None
    assert (flow.concurrency.key, flow.concurrency.limit) == (None, 3)
    assert isinstance(flow.concurrency, Concurrency)


@pytest.mark.parametrize(("concurrency", "expected"), [
    ('concurrency: { key: "{{ repoo }}", limit: 1 }\n',
     ["deploy.yaml:4:21: undefined name 'repoo' (did you mean 'repo'?)"]),
    ('concurrency: { key: "{{ a.ts }}", limit: 1 }\n',
     ["deploy.yaml:4:21: undefined name 'a' (a concurrency key may name the flow's inputs, "
      "run and target)"]),
    ("concurrency: { key: 7, limit: 1 }\n",
     ["deploy.yaml:4:21: 'key' must be a string, usually one {{ … }} expression such as "
      "\"{{ target }}\", got 7"]),
    ('concurrency: { key: "{{ repo }}" }\n',
     ["deploy.yaml:4:14: missing 'limit' in 'concurrency' (how many runs per key at once)"]),
    ("concurrency: { limit: 0 }\n",
     ["deploy.yaml:4:23: 'limit' must be a positive integer, got 0"]),
    ("concurrency: { limit: 1, limt: 2 }\n",
     ["deploy.yaml:4:26: unknown key 'limt' in 'concurrency' (did you mean 'limit'?)"]),
    ("concurrency: 1\n",
     ["deploy.yaml:4:14: 'concurrency' must be a mapping such as "
      "{ key: \"{{ target }}\", limit: 1 }, got 1"]),
    ("concurency: { limit: 1 }\n",
     ["deploy.yaml:4:1: unknown key 'concurency' at flow level (did you mean "
      "'concurrency'?)"]),
])
def test_a_bad_concurrency_is_refused_at_load(concurrency: str, expected: list[str]) -> None:
    assert _problems(concurrency) == expected
