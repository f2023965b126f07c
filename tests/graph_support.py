"""Flows to draw: every example flow, loaded as its own project loads it, and generated ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from tarry.config import load_settings
from tarry.engine.catalog import PROGRAM_PREFIX
from tarry.engine.runtime import find_flow
from tarry.language.loader import parse_flow
from tarry.language.model import Flow

EXAMPLES = Path(__file__).parents[1] / "examples"


def example_flows() -> list[Path]:
    """Every YAML flow file of the examples."""
    return sorted(EXAMPLES.glob("*/flows/*.yaml"))


def load_example(path: Path, monkeypatch: pytest.MonkeyPatch) -> Flow:
    """The flow at ``path`` as its example project loads it (its actions and manifests)."""
    project = path.parents[1]
    monkeypatch.chdir(project)
    flow = find_flow(load_settings(), str(path.relative_to(project)))
    assert not flow.source.startswith(PROGRAM_PREFIX)
    return flow


def long_flow(steps: int) -> Flow:
    """The flow of :func:`long_flow_text`, loaded."""
    return parse_flow(long_flow_text(steps), "long.yaml", actions=set())


def long_flow_text(steps: int) -> str:
    """A flow file of about ``steps`` steps: sixteen logs, a group and a repeat in each
    twenty."""
    lines = ["flow: long", "steps:"]
    for index in range(0, steps, 20):
        lines += [f"  - s{index}: {{ log: {{ message: step {index} }} }}" for index in
                  range(index, index + 16)]
        lines += [f"  - g{index}:", "      steps:",
                  f"        - a{index}: {{ set: {{ x: 1 }} }}",
                  f"        - w{index}: {{ wait: {{ for: 1h }} }}",
                  f"  - p{index}:",
                  f"      repeat: {{ every: 1m, max: 3, until: \"{{{{ c{index}.x }}}}\" }}",
                  "      steps:", f"        - c{index}: {{ set: {{ x: true }} }}"]
    return "\n".join(lines) + "\n"
