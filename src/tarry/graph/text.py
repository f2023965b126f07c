"""A diagram as Mermaid (pastes into a Markdown file on GitHub) or Graphviz DOT.

Both say the same as the SVG: a node per step with its one-line label, a subgraph (Mermaid)
or cluster (DOT) per region, and an arrow from each step to the next unless the step ends
the run. Node names are made from the node ids, which may hold dots; labels are quoted.
"""

from __future__ import annotations

from collections.abc import Iterator

from tarry.graph.diagram import Diagram, Node, Region

__all__ = ["render_dot", "render_mermaid"]


def _name(node_id: str) -> str:
    return "n_" + "".join(char if char.isalnum() else "_" for char in node_id)


def _edges(diagram: Diagram) -> Iterator[tuple[str, str]]:
    """Every arrow as ``(from, to)`` names, with ``flow_start`` and ``flow_end`` for the marks
    (``end`` is a word of Mermaid's own)."""
    body = diagram.body.nodes
    yield ("flow_start", _name(body[0].id)) if body else ("flow_start", "flow_end")
    yield from _region_edges(diagram.body)
    if body and not body[-1].ends:
        yield _name(body[-1].id), "flow_end"


def _region_edges(region: Region) -> Iterator[tuple[str, str]]:
    for before, after in zip(region.nodes, region.nodes[1:], strict=False):
        if not before.ends:
            yield _name(before.id), _name(after.id)
    for node in region.nodes:
        for inner in node.regions:
            yield from _region_edges(inner)
    if region.recover is not None:
        yield from _region_edges(region.recover)


def _label(node: Node) -> str:
    return f"{node.step}: {node.label}"


def render_mermaid(diagram: Diagram) -> str:
    """The diagram as a Mermaid ``flowchart``."""
    lines = ["flowchart TD", f'  flow_start(["{_mermaid_text("start: " + diagram.flow)}"])']
    lines += _mermaid_region(diagram.body, "  ", [0])
    if not diagram.body.nodes or not diagram.body.nodes[-1].ends:
        lines.append('  flow_end(["end: completed"])')
    lines += [f"  {source} --> {target}" for source, target in _edges(diagram)]
    lines += [f"  class {_name(node.id)} wait" for node in diagram.nodes() if node.wait]
    lines.append("  classDef wait stroke:#2680c2,stroke-width:2px")
    return "\n".join(lines) + "\n"


def _mermaid_region(region: Region, indent: str, serial: list[int]) -> Iterator[str]:
    for node in region.nodes:
        shape = ('(["', '"])') if node.kind in ("exit", "fail") else ('["', '"]')
        yield f"{indent}{_name(node.id)}{shape[0]}{_mermaid_text(_label(node))}{shape[1]}"
        for inner in node.regions:
            yield from _mermaid_subgraph(inner, indent, serial)
    if region.recover is not None:
        yield from _mermaid_subgraph(region.recover, indent, serial)


def _mermaid_subgraph(region: Region, indent: str, serial: list[int]) -> Iterator[str]:
    serial[0] += 1
    yield f'{indent}subgraph r{serial[0]}["{_mermaid_text(region.title)}"]'
    yield from _mermaid_region(region, indent + "  ", serial)
    yield f"{indent}end"


def _mermaid_text(text: str) -> str:
    """Text safe inside a quoted Mermaid label: quotes and markup as entity codes."""
    return "".join(f"#{ord(char)};" if char in '"<>#&`{}|' else char for char in text)


def render_dot(diagram: Diagram) -> str:
    """The diagram as a Graphviz ``digraph`` (``dot -Tsvg`` draws it)."""
    lines = [f"digraph {_dot_text(diagram.flow)} {{", "  rankdir=TB;",
             '  node [shape=box, style="rounded", fontname="monospace"];',
             f"  flow_start [shape=oval, label={_dot_text('start: ' + diagram.flow)}];"]
    lines += _dot_region(diagram.body, "  ", [0])
    if not diagram.body.nodes or not diagram.body.nodes[-1].ends:
        lines.append('  flow_end [shape=oval, label="end: completed"];')
    lines += [f"  {source} -> {target};" for source, target in _edges(diagram)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_region(region: Region, indent: str, serial: list[int]) -> Iterator[str]:
    for node in region.nodes:
        extra = ", color=\"#2680c2\", penwidth=2" if node.wait else ""
        yield f"{indent}{_name(node.id)} [label={_dot_text(_label(node))}{extra}];"
        for inner in node.regions:
            yield from _dot_cluster(inner, indent, serial)
    if region.recover is not None:
        yield from _dot_cluster(region.recover, indent, serial)


def _dot_cluster(region: Region, indent: str, serial: list[int]) -> Iterator[str]:
    serial[0] += 1
    yield f"{indent}subgraph cluster_{serial[0]} {{"
    yield f'{indent}  label={_dot_text(region.title)}; style="dashed";'
    yield from _dot_region(region, indent + "  ", serial)
    yield f"{indent}}}"


def _dot_text(text: str) -> str:
    """A DOT quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'
