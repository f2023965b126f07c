"""Checking a flow's use of events against the declared manifests, at load.

With the project's manifests at hand the loader refuses, at ``file:line:column``: a
``wait_for`` (or ``emit``) naming an undeclared event type, a ``match`` without a value for
one of the type's ``correlate_on`` keys, and a ``match`` key the type does not correlate on.
Without manifests (``LoadContext.manifests is None``) nothing here is checked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tarry._suggest import did_you_mean
from tarry.language.context import LoadContext
from tarry.language.expressions import is_template
from tarry.language.fields import NAME_PATTERN
from tarry.language.manifests import Manifest
from tarry.language.model import Position
from tarry.language.yamlsource import YamlMap, YamlNode, YamlScalar

__all__ = ["check_emit", "check_event_match", "check_event_type"]

_NAME = re.compile(NAME_PATTERN)


def check_event_match(ctx: LoadContext, event: YamlNode, match: YamlNode | None, *,
                      owner: Position, where: str) -> None:
    """Check one ``wait_for`` alternative: its type ``event`` and its ``match``.

    A missing ``match`` is reported at ``owner`` (the mapping that should hold it), and
    ``where`` places it in the message (``"in step 'approval'"``).
    """
    manifest = _declared(ctx, event)
    if manifest is None:
        return
    keys = ", ".join(manifest.correlate_on)
    if match is None:
        ctx.report(owner, f"missing 'match' {where} (event type '{manifest.type}' "
                          f"correlates on {keys})")
    elif isinstance(match, YamlMap):  # any other shape is reported by the match reader
        _check_match_keys(ctx, manifest, match)


def check_emit(ctx: LoadContext, args: YamlNode) -> None:
    """Check the literal ``type`` of an ``emit`` step (a computed one is checked when sent)."""
    entry = args.get("type") if isinstance(args, YamlMap) else None
    if entry is not None and not (isinstance(entry.value, YamlScalar)
                                  and isinstance(entry.value.value, str)
                                  and is_template(entry.value.value)):
        _declared(ctx, entry.value)


def check_event_type(ctx: LoadContext, event: YamlNode) -> None:
    """Report the event type named by ``event`` (a trigger's) when it is not declared."""
    _declared(ctx, event)


def _declared(ctx: LoadContext, event: YamlNode) -> Manifest | None:
    """The manifest of the type named by ``event``; reports an undeclared one. None when
    manifests are not checked, the type is undeclared, or ``event`` is not a name (which
    its own reader reports)."""
    if ctx.manifests is None or not isinstance(event, YamlScalar) \
            or not isinstance(event.value, str) or not _NAME.fullmatch(event.value):
        return None
    manifest = ctx.manifests.get(event.value)
    if manifest is None:
        ctx.report(event.pos, f"unknown event type '{event.value}'"
                              f"{_type_hint(event.value, ctx.manifests)}")
    return manifest


def _type_hint(name: str, manifests: Mapping[str, Manifest]) -> str:
    return (did_you_mean(name, manifests)
            or "; declare it under 'events:' in an event manifest (events.yaml)")


def _check_match_keys(ctx: LoadContext, manifest: Manifest, match: YamlMap) -> None:
    """Every ``correlate_on`` key given, no other key; a misspelt key, or the path of a key
    given in its place, is suggested once (the key is then not reported missing too)."""
    keys = manifest.correlate_on
    suggested = set()
    for entry in match.entries:
        if entry.key in keys:
            continue
        meant = _key_at(manifest, entry.key)
        hint = (f" (did you mean '{meant}'? '{entry.key}' is where the payload holds its "
                "value; a match gives the key names)") if meant else did_you_mean(entry.key,
                                                                                 keys)
        suggested.add(meant or hint)
        ctx.report(entry.key_pos, f"unknown key '{entry.key}' in 'match'"
                                  f"{hint or _correlates(manifest)}")
    for key in keys:
        if match.get(key) is None and key not in suggested and \
                did_you_mean(key, [key]) not in suggested:
            ctx.report(match.pos, f"missing '{key}' in 'match'{_correlates(manifest)}")


def _key_at(manifest: Manifest, path: str) -> str | None:
    """The correlation key whose value is read at ``path`` (written dotted), if any."""
    return next((key for key in manifest.correlate_on
                 if ".".join(manifest.path_of(key)) == path and key != path), None)


def _correlates(manifest: Manifest) -> str:
    return f" (event type '{manifest.type}' correlates on {', '.join(manifest.correlate_on)})"
