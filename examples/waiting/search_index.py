"""A stand-in for a search service, for the ``reindex-ticket`` example.

``search.status`` answers how far the indexing of a document has got. A real action would ask
the service over HTTP; this one is deterministic, so the example behaves the same on every
machine and in tests: it reports ``queued`` on the first poll, ``indexing`` on the second and
``indexed`` from the third on. It knows which poll it answers from its ``poll`` argument (the
flow passes ``loop.index``, which counts from 0).

Like every action it is called as ``status(args, ctx)`` with the step's rendered arguments,
and what it returns is the step's binding. An exception it raises fails the step.
"""

from __future__ import annotations

from typing import Any

__all__ = ["status"]

_EARLY_STATES = ("queued", "indexing")
"""What the first polls report; every later poll reports ``indexed``."""


def status(args: dict[str, Any], ctx: object) -> dict[str, Any]:
    """``search.status: {id, poll}`` → ``{id, status}``.

    Raises ``ValueError`` (failing the step) when ``id`` is missing or ``poll`` is not a
    count from 0, as a real client would refuse a bad request.
    """
    document, poll = args.get("id"), args.get("poll")
    if not document:
        raise ValueError("search.status needs the 'id' of a document")
    if isinstance(poll, bool) or not isinstance(poll, int) or poll < 0:
        raise ValueError(f"search.status needs 'poll' as a count from 0, got {poll!r}")
    state = _EARLY_STATES[poll] if poll < len(_EARLY_STATES) else "indexed"
    return {"id": document, "status": state}
