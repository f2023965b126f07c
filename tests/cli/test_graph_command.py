"""``tarry graph FLOW --format svg|mermaid|dot``: a flow drawn, without a store."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from .conftest import WAITING_FLOW, Project


def test_graph_writes_svg_by_default_without_creating_a_store(project: Project) -> None:
    project.flow("cooling", WAITING_FLOW)
    result = project.tarry("graph", "cooling")
    assert result.exit_code == 0, result.stderr
    root = ET.fromstring(result.stdout)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "cooling_off: timer 2d" in result.stdout
    assert not (project.root / "state").exists()


def test_graph_writes_mermaid_and_dot_and_to_a_file(project: Project) -> None:
    project.flow("cooling", WAITING_FLOW)
    mermaid = project.tarry("graph", "cooling", "--format", "mermaid")
    assert mermaid.stdout.startswith("flowchart TD\n")
    assert '  n_cooling_off["cooling_off: timer 2d"]' in mermaid.stdout.splitlines()
    written = project.tarry("graph", "cooling", "--format", "DOT", "-o", "cooling.dot")
    assert (written.exit_code, written.stdout) == (0, "")
    assert (project.root / "cooling.dot").read_text().startswith('digraph "cooling" {')


def test_graph_of_an_unknown_flow_or_format_says_what_exists(project: Project) -> None:
    project.flow("cooling", WAITING_FLOW)
    missing = project.tarry("graph", "coolin")
    assert missing.exit_code == 1
    assert "no flow named 'coolin'" in missing.stderr
    assert "did you mean 'cooling'?" in missing.stderr
    bad = project.tarry("graph", "cooling", "--format", "png")
    assert bad.exit_code == 2
    assert "'png' is not a format; use one of: svg, mermaid, dot" in bad.stderr
