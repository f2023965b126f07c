"""SVG, Mermaid and DOT: each well-formed for its own tools, saying the same as the diagram."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from graph_support import example_flows, load_example, long_flow
from tarry.graph import Mark, diagram_of, render_dot, render_mermaid, render_svg
from tarry.graph.layout import CHAR
from tarry.language.loader import parse_flow

SVG = "{http://www.w3.org/2000/svg}"


def _groups(svg: str, css: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [g for g in root.iter(f"{SVG}g") if css in (g.get("class") or "").split()]


@pytest.mark.parametrize("path", example_flows(), ids=lambda path: path.stem)
def test_svg_is_well_formed_with_every_node_titled_and_its_text_inside_its_box(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    diagram = diagram_of(load_example(path, monkeypatch))
    svg = render_svg(diagram)
    nodes = _groups(svg, "node")
    assert [g.get("data-node") for g in nodes] == [node.id for node in diagram.nodes()]
    for group in nodes:
        rect = group.find(f"{SVG}rect")
        assert rect is not None
        assert group.find(f"{SVG}title") is not None
        right = float(rect.get("x", 0)) + float(rect.get("width", 0))
        for text in group.iter(f"{SVG}text"):
            assert float(text.get("x", 0)) + len(text.text or "") * CHAR <= right, text.text


def test_counts_are_links_to_the_runs_at_that_step_by_status() -> None:
    diagram = diagram_of(long_flow(20))
    svg = render_svg(diagram, counts={"g0.w0": {"waiting": 1234, "failed": 2, "pending": 9},
                                      "s3": {"waiting": 0}},
                     link=lambda node, status: f"/runs?flow=long&at_step={node}&status={status}")
    (group,) = [g for g in _groups(svg, "node") if g.get("data-node") == "g0.w0"]
    links = {a.get("href"): "".join(a.itertext()) for a in group.iter(f"{SVG}a")}
    assert links == {"/runs?flow=long&at_step=g0.w0&status=waiting": "1,234 waiting",
                     "/runs?flow=long&at_step=g0.w0&status=failed": "2 failed"}
    assert not [g for g in _groups(svg, "node") if g.get("data-node") == "s3"
                and g.find(f".//{SVG}a") is not None]


def test_a_runs_path_marks_each_node_with_what_the_run_did_there() -> None:
    diagram = diagram_of(long_flow(20))
    svg = render_svg(diagram, path={"s0": Mark("done", "12ms"), "s1": Mark("skipped"),
                                    "g0.w0": Mark("here", "waiting for timer")})
    classes = {g.get("data-node"): g.get("class") for g in _groups(svg, "node")}
    assert "state-done" in classes["s0"]
    assert "state-skipped" in classes["s1"]
    assert "state-here" in classes["g0.w0"]
    assert "state-" not in classes["s2"]
    assert "done: 12ms" in svg
    assert "here: waiting for timer" in svg


def test_text_is_escaped() -> None:
    flow = parse_flow('flow: esc\ndescription: "<b>&</b>"\nsteps:\n'
                      '  - a: { fail: "<script>alert(1)</script>" }\n', "e.yaml", actions=set())
    svg = render_svg(diagram_of(flow))
    ET.fromstring(svg)
    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg


_MERMAID_NODE = re.compile(r"^\s*(\w+)(\[\"|\(\[\")")
_MERMAID_EDGE = re.compile(r"^\s*(\w+) --> (\w+)$")


@pytest.mark.parametrize("path", example_flows(), ids=lambda path: path.stem)
def test_mermaid_declares_each_node_once_balances_subgraphs_and_links_declared_nodes(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    diagram = diagram_of(load_example(path, monkeypatch))
    lines = render_mermaid(diagram).splitlines()
    assert lines[0] == "flowchart TD"
    declared = [m.group(1) for line in lines if (m := _MERMAID_NODE.match(line))]
    assert len(declared) == len(set(declared)) == len(list(diagram.nodes())) + 1 + (
        0 if diagram.body.nodes[-1].ends else 1)
    assert "end" not in declared
    depth = 0
    for line in lines:
        depth += line.strip().startswith("subgraph ") - (line.strip() == "end")
        assert depth >= 0
    assert depth == 0
    edges = [m.groups() for line in lines if (m := _MERMAID_EDGE.match(line))]
    assert edges
    assert all(a in declared and b in declared for a, b in edges)
    for line in lines:
        assert line.count('"') % 2 == 0, line


DOT = shutil.which("dot")


@pytest.mark.skipif(DOT is None, reason="GRAPH TESTS NOT RUN: they need Graphviz "
                                        "(apt-get install -y graphviz)")
@pytest.mark.parametrize("path", example_flows(), ids=lambda path: path.stem)
def test_graphviz_accepts_the_dot_of_every_example(path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert DOT is not None
    text = render_dot(diagram_of(load_example(path, monkeypatch)))
    done = subprocess.run([DOT, "-Tsvg"], input=text, capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    assert not done.stderr
    assert "<svg" in done.stdout


def test_a_folded_node_counts_the_runs_inside_it_and_hides_its_steps() -> None:
    diagram = diagram_of(long_flow(20))
    svg = render_svg(diagram, counts={"g0.w0": {"waiting": 3}, "g0": {"failed": 1},
                                      "s1": {"waiting": 2}},
                     link=lambda node, status: f"/runs?at_step={node}", folded={"g0"})
    groups = {g.get("data-node"): g for g in _groups(svg, "node")}
    assert "g0.w0" not in groups
    folded = [text.text for text in groups["g0"].iter(f"{SVG}text")]
    assert folded[-3:] == ["▸ 2 steps inside", "3 waiting", "1 failed"]
    assert groups["g0"].find(f".//{SVG}a") is None  # the runs of several steps: no one list
    assert groups["s1"].find(f".//{SVG}a") is not None
