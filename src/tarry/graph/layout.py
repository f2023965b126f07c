"""Where each part of a :class:`~tarry.graph.diagram.Diagram` goes: nested boxes, top down.

Flows have no jumps, so a general graph layout would only rediscover their nesting. Each
region is a column: its nodes stacked with an arrow between each and the next, all as wide as
the region, and a node that holds regions grows to hold them. A long flow grows downwards (a
page scrolls), a deep one a little wider per level. Text is set in a monospace font and cut to
what fits its box, so nothing can spill over another box.

:func:`layout` is pure geometry: it takes how many lines of counts each node needs (a flow's
page shows runs per node) and which nodes to draw folded (their regions as one line).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from tarry.graph.diagram import Diagram, Node, Region

__all__ = ["CHAR", "LINE", "Box", "Layout", "Placed", "PlacedRegion", "layout"]

CHAR = 7.2
"""Width of one character of the drawing's 12 px monospace text."""
LINE = 16
"""Height of one line of text."""
_NODE = 300
"""Width of a node that holds no region."""
_PAD = 8
"""Space between a box's edge and its text."""
_INSET = 12
"""Space between a region's edge and the nodes inside it."""
_GAP = 26
"""Vertical space between two nodes: room for the arrow."""
_PILL = 26
"""Height of the start and end marks."""


@dataclass(frozen=True)
class Box:
    """A rectangle: its top-left corner, width and height."""

    x: float
    y: float
    w: float
    h: float

    def contains(self, other: Box) -> bool:
        """Whether ``other`` lies wholly inside this box."""
        return (self.x <= other.x and self.y <= other.y and other.x + other.w <= self.x + self.w
                and other.y + other.h <= self.y + self.h)

    def overlaps(self, other: Box) -> bool:
        """Whether the two boxes share any area."""
        return (self.x < other.x + other.w and other.x < self.x + self.w
                and self.y < other.y + other.h and other.y < self.y + self.h)

    def chars(self) -> int:
        """How many characters of text fit across the box, inside its padding."""
        return max(1, int((self.w - 2 * _PAD) // CHAR))


@dataclass(frozen=True)
class Placed:
    """A node and its box; ``folded`` when its regions are drawn as one line."""

    node: Node
    box: Box
    depth: int
    folded: bool = False


@dataclass(frozen=True)
class PlacedRegion:
    """A region and its box (its title on its first line)."""

    region: Region
    box: Box
    depth: int


@dataclass
class Layout:
    """Everything placed: the drawing's size, the nodes and regions in the order they are
    painted (each container before what it holds), the arrows, the start and end marks."""

    width: float
    height: float
    items: list[Placed | PlacedRegion] = field(default_factory=list)
    arrows: list[tuple[float, float, float]] = field(default_factory=list)
    """Vertical arrows, each ``(x, from y, to y)``."""
    start: Box | None = None
    end: Box | None = None

    @property
    def nodes(self) -> list[Placed]:
        """The placed nodes, in painting order."""
        return [item for item in self.items if isinstance(item, Placed)]

    @property
    def regions(self) -> list[PlacedRegion]:
        """The placed regions, in painting order."""
        return [item for item in self.items if isinstance(item, PlacedRegion)]


def _text_lines(node: Node, count_lines: int, folded: bool) -> int:
    return 1 + len(node.notes) + count_lines + (1 if folded and node.regions else 0)


def _node_height(node: Node, counts: Mapping[str | None, int], folds: Collection[str]) -> float:
    folded = node.id in folds
    height: float = 2 * _PAD + LINE * _text_lines(node, counts.get(node.id, 0), folded)
    if not folded:
        height += sum(_region_height(region, counts, folds) + _INSET for region in node.regions)
    return height


def _region_height(region: Region, counts: Mapping[str | None, int],
                   folds: Collection[str]) -> float:
    height: float = LINE + _PAD + _INSET
    height += sum(_node_height(node, counts, folds) for node in region.nodes)
    height += _GAP * max(0, len(region.nodes) - 1) + _INSET
    if region.recover is not None:
        height += _region_height(region.recover, counts, folds) + _INSET
    return height


def _node_width(node: Node, folds: Collection[str]) -> float:
    if node.id in folds or not node.regions:
        return _NODE
    return max(_NODE, *(_region_width(region, folds) + 2 * _INSET for region in node.regions))


def _region_width(region: Region, folds: Collection[str]) -> float:
    widths = [_node_width(node, folds) for node in region.nodes]
    if region.recover is not None:
        widths.append(_region_width(region.recover, folds))
    return max(widths, default=_NODE) + 2 * _INSET


def layout(diagram: Diagram, *, count_lines: Mapping[str | None, int] | None = None,
           folded: Collection[str] = ()) -> Layout:
    """Place ``diagram``: ``count_lines`` maps a node id (None: the start mark) to the lines
    its counts take, ``folded`` names the nodes whose regions are drawn folded."""
    counts = count_lines or {}
    body = diagram.body
    width = _region_width(body, folded)
    margin: float = _INSET
    drawing = Layout(width=width + 2 * margin, height=0)
    y: float = margin
    start_lines = len(diagram.start) + counts.get(None, 0)
    start_width = 120 if not start_lines else min(width, _NODE)
    drawing.start = Box(margin + (width - start_width) / 2, y, start_width,
                        _PILL + LINE * start_lines)
    y += drawing.start.h + _GAP
    placer = _Placer(drawing, counts, folded)
    placer.nodes(body, margin, y, width, depth=0)
    y += sum(_node_height(node, counts, folded) for node in body.nodes)
    y += _GAP * max(0, len(body.nodes) - 1)
    first = drawing.start.y + drawing.start.h
    if body.nodes:
        drawing.arrows.append((margin + width / 2, first, drawing.nodes[0].box.y))
    if not body.nodes or not body.nodes[-1].ends:
        drawing.arrows.append((margin + width / 2, y, y + _GAP))
        drawing.end = Box(margin + width / 2 - 60, y + _GAP, 120, _PILL)
        y += _GAP + _PILL
    if body.recover is not None:
        y += _INSET
        y = placer.region(body.recover, margin, y, width, depth=0)
    drawing.height = y + margin
    return drawing


@dataclass(frozen=True)
class _Placer:
    """Places regions and their nodes into one drawing."""

    drawing: Layout
    counts: Mapping[str | None, int]
    folds: Collection[str]

    def nodes(self, region: Region, x: float, y: float, width: float, depth: int) -> float:
        """Stack ``region``'s nodes from ``y`` down, each ``width`` wide; the y below the
        last."""
        for index, node in enumerate(region.nodes):
            height = _node_height(node, self.counts, self.folds)
            folded = node.id in self.folds and bool(node.regions)
            self.drawing.items.append(Placed(node, Box(x, y, width, height), depth, folded))
            inner = y + 2 * _PAD + LINE * _text_lines(node, self.counts.get(node.id, 0), folded)
            if not folded:
                for held in node.regions:
                    inner = self.region(held, x + _INSET, inner, width - 2 * _INSET,
                                        depth + 1) + _INSET
            y += height
            if index < len(region.nodes) - 1:
                if not node.ends:
                    self.drawing.arrows.append((x + width / 2, y, y + _GAP))
                y += _GAP
        return y

    def region(self, region: Region, x: float, y: float, width: float, depth: int) -> float:
        """Place ``region`` with its top at ``y``; the y of its bottom edge."""
        height = _region_height(region, self.counts, self.folds)
        self.drawing.items.append(PlacedRegion(region, Box(x, y, width, height), depth))
        inner_y = y + LINE + _PAD + _INSET
        bottom = self.nodes(region, x + _INSET, inner_y, width - 2 * _INSET, depth)
        if region.recover is not None:
            self.region(region.recover, x + _INSET, bottom + _INSET, width - 2 * _INSET,
                        depth + 1)
        return y + height
