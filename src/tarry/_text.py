"""Renderings of user-supplied text for messages."""

from __future__ import annotations

__all__ = ["clip"]


def clip(text: str, width: int = 40) -> str:
    """``text`` cut to ``width`` characters (ending in ``...`` when cut), for a message that
    quotes what a user wrote without repeating a 5,000-digit number."""
    return text if len(text) <= width else text[:width - 3] + "..."
