"""Nested boxes: nothing overlaps, what a node holds lies inside it, text fits its box."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from graph_support import example_flows, load_example, long_flow
from tarry.graph import diagram_of
from tarry.graph.layout import Box, Layout, layout


def _boxes(placed: Layout) -> list[Box]:
    return [item.box for item in placed.items]


def assert_nested(placed: Layout) -> None:
    """Any two boxes are apart or one holds the other; all lie inside the drawing; the
    arrows run in the gaps between boxes, never across one."""
    whole = Box(0, 0, placed.width, placed.height)
    boxes = _boxes(placed)
    for box in boxes:
        assert whole.contains(box), box
    for one, other in itertools.combinations(boxes, 2):
        if one.overlaps(other):
            assert one.contains(other) or other.contains(one), (one, other)
    for x, top, bottom in placed.arrows:
        arrow = Box(x, top + 0.5, 0.01, bottom - top - 1)
        crossed = [box for box in boxes if box.overlaps(arrow) and not box.contains(arrow)]
        assert not crossed, (x, top, bottom, crossed)


@pytest.mark.parametrize("path", example_flows(), ids=lambda path: path.stem)
def test_every_example_flow_is_laid_out_without_overlap(path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    assert_nested(layout(diagram_of(load_example(path, monkeypatch))))


def test_a_node_holds_its_regions_and_they_hold_their_nodes() -> None:
    placed = layout(diagram_of(long_flow(40)))
    by_id = {item.node.id: item.box for item in placed.nodes}
    regions = placed.regions
    assert by_id["g0"].contains(regions[0].box)
    assert regions[0].box.contains(by_id["g0.a0"])
    assert regions[0].box.contains(by_id["g0.w0"])
    assert by_id["g0.a0"].y + by_id["g0.a0"].h < by_id["g0.w0"].y


def test_a_200_step_flow_grows_downwards_and_stays_narrow() -> None:
    small, large = (layout(diagram_of(long_flow(steps))) for steps in (20, 200))
    assert len(large.nodes) > 200
    assert large.width == small.width < 400
    assert large.height > 9 * small.height
    assert_nested(large)


def test_counts_lines_make_room_and_folded_nodes_hide_their_regions() -> None:
    diagram = diagram_of(long_flow(20))
    plain = layout(diagram)
    counted = layout(diagram, count_lines={"s0": 1})
    assert counted.height == plain.height + 16
    folded = layout(diagram, folded={"g0"})
    assert "g0.a0" not in {item.node.id for item in folded.nodes}
    assert [item.folded for item in folded.nodes if item.node.id == "g0"] == [True]
    assert_nested(counted)
    assert_nested(folded)
