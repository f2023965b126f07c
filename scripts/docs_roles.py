"""An mkdocs hook (``hooks:`` in ``mkdocs.yml``): the docstrings' cross-reference roles shown
as code in the Python API reference.

The package's docstrings name other objects the reStructuredText way (``:class:`Client```,
``:meth:`~tarry.Context.parallel```); rendered as Markdown that leaves the role's name in the
text. :func:`plain_roles` keeps the object's name (after a ``~``, its last part) and drops the
role.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:class|meth|func|mod|attr|data|exc|obj):<code>(~?)([^<]*)</code>")


def plain_roles(html: str) -> str:
    """``html`` with every ``:role:<code>name</code>`` as ``<code>name</code>``."""
    return _ROLE.sub(lambda found: "<code>{}</code>".format(
        found[2].rsplit(".", 1)[-1] if found[1] else found[2]), html)


def on_page_content(html: str, **_: Any) -> str:
    """mkdocs hook: every page's HTML with its roles made plain."""
    return plain_roles(html)
