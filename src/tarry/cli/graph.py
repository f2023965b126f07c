"""``tarry graph``: draw a flow as SVG, Mermaid or Graphviz DOT, without opening a store."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from tarry.cli.options import choice
from tarry.config import load_settings
from tarry.engine.catalog import PROGRAM_PREFIX
from tarry.engine.runtime import find_flow
from tarry.errors import ConfigError
from tarry.graph import diagram_of, render_dot, render_mermaid, render_svg

__all__ = ["graph"]



class GraphFormat(StrEnum):
    """What ``tarry graph`` writes."""

    SVG = "svg"
    MERMAID = "mermaid"
    DOT = "dot"


_RENDER = {GraphFormat.SVG: render_svg, GraphFormat.MERMAID: render_mermaid,
           GraphFormat.DOT: render_dot}


def graph(flow: Annotated[str, typer.Argument(
              metavar="FLOW", help="A flow name (a YAML flow of the flows folder) or the path "
                                   "of a YAML flow file.")],
          output_format: Annotated[GraphFormat, typer.Option(
              "--format", metavar="svg|mermaid|dot", parser=choice(GraphFormat, "a format"),
              help="svg (a picture), mermaid (pastes into Markdown) or dot (Graphviz).")]
          = GraphFormat.SVG,
          output: Annotated[Path | None, typer.Option(
              "-o", "--output", metavar="FILE",
              help="Write the drawing to FILE instead of standard output.")] = None) -> None:
    """Draw a flow: its steps, waits, loops, reminders and recovery, top to bottom."""
    found = find_flow(load_settings(), flow)
    if found.source.startswith(PROGRAM_PREFIX):
        raise ConfigError(f"flow '{found.name}' is a Python flow: it is drawn from what its "
                          "runs recorded, on its page of the dashboard (tarry serve)")
    drawing = _RENDER[output_format](diagram_of(found))
    if output is None:
        typer.echo(drawing, nl=False)
    else:
        output.write_text(drawing, encoding="utf-8")
