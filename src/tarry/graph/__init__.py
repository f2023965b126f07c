"""Flows drawn: a YAML flow's steps as nested boxes, with where its runs are now.

:func:`diagram_of` turns a loaded flow into a :class:`Diagram` (pure data),
:func:`render_svg` draws it (optionally with run counts per step, or one run's path), and
:func:`render_mermaid` / :func:`render_dot` write it for Markdown and Graphviz. ``tarry
graph``, ``GET /v1/flows/{name}/graph`` and the dashboard's flow and run pages use these. A
Python flow is drawn by :func:`diagram_of_operations` from what its runs recorded.
"""

from tarry.graph.diagram import Diagram, Node, Region, diagram_of
from tarry.graph.document import Counts, diagram_document
from tarry.graph.operations import Recorded, diagram_of_operations
from tarry.graph.path import path_marks
from tarry.graph.svg import Mark, render_svg
from tarry.graph.text import render_dot, render_mermaid

__all__ = ["Counts", "Diagram", "Mark", "Node", "Recorded", "Region", "diagram_document",
           "diagram_of", "diagram_of_operations", "path_marks", "render_dot", "render_mermaid",
           "render_svg"]
