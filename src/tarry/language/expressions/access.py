"""Reading a key of a dict or an index of a list: the only access expressions have.

There is no attribute access on Python objects: ``.name`` reads the key ``name`` of a dict,
exactly like ``["name"]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tarry._suggest import did_you_mean
from tarry._text import clip
from tarry.language.expressions.values import UNDEFINED, kind_of, with_article

__all__ = ["read", "unreadable"]


def read(container: Any, key: Any) -> Any:
    """``container[key]`` for a dict key or an in-range list index, else :data:`UNDEFINED`."""
    if type(container) is dict or isinstance(container, Mapping):
        return container.get(key, UNDEFINED) if isinstance(key, str) else UNDEFINED
    if isinstance(container, list) and type(key) is int and -len(container) <= key < len(
            container):
        return container[key]
    return UNDEFINED


def _describe_key(key: Any) -> str:
    """``key 'name'``, ``index 3`` or ``a bool key``."""
    if isinstance(key, str):
        return f"key '{clip(key, 60)}'"
    if type(key) is int:
        return f"index {key}"
    return f"{with_article(kind_of(key))} key"


def unreadable(container: Any, key: Any, label: str) -> str:
    """Why ``read(container, key)`` found nothing; ``label`` is the source of the container."""
    kind = kind_of(container)
    if kind == "dict":
        if not isinstance(key, str):
            return f"cannot index dict '{label}' with {with_article(kind_of(key))}; its keys " \
                   "are strings"
        return f"'{label}' has no key '{clip(key, 60)}'" + did_you_mean(
            key, (name for name in container if isinstance(name, str)))
    if kind == "list":
        if isinstance(key, str):
            return f"'{label}' is a list and has no key '{clip(key, 60)}'"
        if type(key) is not int:
            return f"cannot index list '{label}' with {with_article(kind_of(key))}; use an int"
        return f"'{label}' has no index {key} (its length is {len(container)})"
    return f"cannot read {_describe_key(key)} of '{label}': it is {with_article(kind)}"
