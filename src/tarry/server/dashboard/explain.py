"""The one place the dashboard gets a run's explanation from, so it says exactly what
``tarry show`` says (SPEC principle 5)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["explanation"]


def explanation(doc: Mapping[str, Any]) -> str | None:
    """What the run waits for, since when, until when, and what happens then; None when it
    waits for nothing."""
    # Imported here: the command line's package imports the server (tarry serve).
    from tarry.cli.render import explain_wait  # noqa: PLC0415

    return explain_wait(doc)
