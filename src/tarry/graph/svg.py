"""A diagram as SVG text: boxes, arrows and real text (searchable, read by screen readers),
each node with a ``<title>`` that shows its whole text on hover.

Two overlays share one drawing: **counts** (a flow's page: how many runs are at each node now,
by status, each a link to those runs) and a **path** (a run's page: what the run did at each
node). Styling is by class (``kind-wait_for``, ``wait-event``, ``state-failed``, …) in
``graph.css``, embedded in the drawing's own ``<style>`` so that the SVG is whole on its own
(``tarry graph --format svg``), or linked by the page that shows it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from html import escape
from importlib.resources import files

from tarry.graph.diagram import Diagram, Node
from tarry.graph.document import Counts
from tarry.graph.layout import CHAR, LINE, Box, Layout, PlacedRegion, layout

__all__ = ["Mark", "StatusLink", "render_svg", "stylesheet"]

StatusLink = Callable[[str | None, str], str]
"""``(node id, status) → href`` of the runs a count stands for (node None: the start's)."""

_COUNTED = ("waiting", "held", "running", "failed")
"""The statuses a flow's page counts per node, in the order they are shown."""


@dataclass(frozen=True)
class Mark:
    """What one run did at a node: ``state`` is ``done``, ``skipped``, ``failed``, ``retried``
    or ``here`` (where it is now); ``note`` says more in a few words (a duration, a wait)."""

    state: str
    note: str = ""


@functools.cache
def stylesheet() -> str:
    """The drawing's stylesheet (``graph.css`` in this package)."""
    return files("tarry.graph").joinpath("graph.css").read_text(encoding="utf-8")


def render_svg(diagram: Diagram, *, counts: Counts | None = None,
               link: StatusLink | None = None, path: Mapping[str, Mark] | None = None,
               folded: Collection[str] = (), styled: bool = True) -> str:
    """The SVG of ``diagram``, with runs ``counts`` per node id and status (each linked
    through ``link``; those at no step on the start mark) or one run's ``path`` marks per
    node id. ``styled`` embeds :func:`stylesheet`; a page that links it instead (a strict
    content security policy refuses inline styles) passes False."""
    rolled = _rolled_up(diagram, counts or {}, folded)
    shown = {node: by for node, by in rolled.items() if node and _shown(by)}
    at_start = (counts or {}).get(None, {})
    path = path or {}
    lines: dict[str | None, int] = dict.fromkeys([*shown, *path], 1)
    if _shown(at_start):
        lines[None] = 1
    placed = layout(diagram, count_lines=lines, folded=folded)
    parts = [_open(diagram, placed, styled)]
    for item in placed.items:
        if isinstance(item, PlacedRegion):
            parts.append(_region(item.box, item.region.kind, item.region.title))
            continue
        mark = path.get(item.node.id)
        below = _line_y_of(item.box, 1 + len(item.node.notes) + (1 if item.folded else 0))
        extra = (_count_texts(item.node.id, shown[item.node.id], item.box, below,
                              None if item.folded else link)
                 if item.node.id in shown else
                 [_text(item.box, below, _mark_text(mark), "note")] if mark else [])
        parts.append(_node(item.node, item.box, item.folded, mark, extra))
    parts += [f'<line class="arrow" x1="{x:g}" y1="{y1:g}" x2="{x:g}" y2="{y2 - 2:g}"/>'
              for x, y1, y2 in placed.arrows]
    if placed.start is not None:
        parts.append(_pill(placed.start, ["start", *diagram.start], at_start, link))
    if placed.end is not None:
        parts.append(_pill(placed.end, ["end: completed"], {}, None))
    parts.append("</svg>")
    return "\n".join(parts)


def _rolled_up(diagram: Diagram, counts: Counts,
               folded: Collection[str]) -> dict[str | None, Mapping[str, int]]:
    """``counts`` with a folded node's standing for every node inside it too."""
    rolled: dict[str | None, Mapping[str, int]] = dict(counts)
    for node in diagram.nodes():
        if node.id not in folded or not node.regions:
            continue
        inside = [by for place, by in counts.items()
                  if place is not None and (place == node.id or place.startswith(node.id + "."))]
        rolled[node.id] = {status: sum(by.get(status, 0) for by in inside)
                           for status in _COUNTED}
    return rolled


def _shown(by_status: Mapping[str, int]) -> bool:
    return any(by_status.get(status) for status in _COUNTED)


def _open(diagram: Diagram, placed: Layout, styled: bool) -> str:
    about = escape(diagram.description or f"The steps of flow {diagram.flow}, top to bottom.")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="flow-graph" role="img" '
            f'aria-labelledby="graph-title graph-desc" width="{placed.width:g}" '
            f'height="{placed.height:g}" viewBox="0 0 {placed.width:g} {placed.height:g}">\n'
            f'<title id="graph-title">flow {escape(diagram.flow)}</title>\n'
            f'<desc id="graph-desc">{about}</desc>\n'
            + (f"<style>{stylesheet()}</style>\n" if styled else "") +
            '<defs><marker id="arrowhead" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
            'fill="#7b8794"/></marker></defs>')


def _region(box: Box, kind: str, title: str) -> str:
    return (f'<g class="region kind-{kind}">{_rect(box)}'
            f'{_text(box, box.y + LINE, title, "title")}</g>')


def _node(node: Node, box: Box, folded: bool, mark: Mark | None, extra: list[str]) -> str:
    classes = ["node", f"kind-{node.kind}"]
    if node.wait:
        classes += ["wait", f"wait-{node.wait}"]
    if mark:
        classes.append(f"state-{mark.state}")
    lines = [(f"{node.step}: {node.label}", "label"), *((note, "note") for note in node.notes)]
    if folded:
        lines.append((f"▸ {sum(len(region.nodes) for region in node.regions)} steps inside",
                      "note"))
    texts = [_text(box, _line_y_of(box, index), text, css) for index, (text, css) in
             enumerate(lines)]
    whole = " / ".join(text for text, _ in lines)
    if mark:
        whole += f" / {_mark_text(mark)}"
    return (f'<g class="{" ".join(classes)}" id="node-{escape(node.id)}" '
            f'data-node="{escape(node.id)}"><title>{escape(whole)}</title>{_rect(box)}'
            + "".join(texts) + "".join(extra) + "</g>")


def _count_texts(node_id: str | None, by_status: Mapping[str, int], box: Box, y: float,
                 link: StatusLink | None) -> list[str]:
    x = box.x + 8
    texts = []
    for status in _COUNTED:
        count = by_status.get(status, 0)
        if not count:
            continue
        words = f"{count:,} {status}"
        text = (f'<text class="count status-{status}" x="{x:g}" y="{y:g}" '
                f'data-status="{status}" data-count="{count}">{escape(words)}</text>')
        if link is not None:
            text = f'<a href="{escape(link(node_id, status))}">{text}</a>'
        texts.append(text)
        x += (len(words) + 2) * CHAR
        if x > box.x + box.w:
            break
    return texts


def _mark_text(mark: Mark) -> str:
    return f"{mark.state}: {mark.note}" if mark.note else mark.state


def _pill(box: Box, lines: list[str], counts: Mapping[str, int],
          link: StatusLink | None) -> str:
    texts = "".join(_text(box, box.y + 17 + LINE * index, line, "pill-text", center=True)
                    for index, line in enumerate(lines))
    if _shown(counts):
        texts += "".join(_count_texts(None, counts, box, box.y + 17 + LINE * len(lines), link))
    return f'<g class="pill">{_rect(box)}{texts}</g>'


def _rect(box: Box) -> str:
    return f'<rect x="{box.x:g}" y="{box.y:g}" width="{box.w:g}" height="{box.h:g}"/>'


def _line_y_of(box: Box, index: int) -> float:
    return box.y + 8 + LINE * index + 12


def _text(box: Box, y: float, text: str, css: str, *, center: bool = False) -> str:
    fit = _fit(text, box.chars())
    x = box.x + box.w / 2 if center else box.x + 8
    anchor = ' text-anchor="middle"' if center else ""
    return f'<text class="{css}" x="{x:g}" y="{y:g}"{anchor}>{escape(fit)}</text>'


def _fit(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:max(0, chars - 1)] + "…"

