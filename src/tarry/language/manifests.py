"""Event manifests: the declaration of each event type.

```yaml
events:
  slack.approval:
    correlate_on: [message]          # required, 1+ top-level payload fields
    schema: { type: object, required: [message, approved] }   # optional JSON Schema
    buffer: 10m                      # optional; default 5m, 0 disables
    secret_env: SLACK_SIGNING_SECRET # optional; HTTP senders must sign with it
    signature: slack                 # optional with secret_env: tarry (default), github, slack
```

Manifests are validated as strictly as flows: unknown keys, a schema that is not a valid JSON
Schema, a bad duration — each a problem with ``file:line:column``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tarry._suggest import did_you_mean
from tarry.errors import LoadError, Problem
from tarry.files import FILE_BYTES, read_source
from tarry.language.context import LoadContext
from tarry.language.fields import Fields, read_duration, read_mapping, read_name, read_text
from tarry.language.model import Position
from tarry.language.schemas import (
    SchemaProblem,
    schema_problem,
    validation_problems,
    validator,
)
from tarry.language.yamlsource import YamlMap, YamlNode, YamlScalar, YamlSeq, read_yaml, to_plain
from tarry.values import load_json

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["DEFAULT_BUFFER", "SIGNATURE_SCHEMES", "Manifest", "Manifests", "correlation_key",
           "load_manifests", "parse_manifests", "read_schema"]

DEFAULT_BUFFER = timedelta(minutes=5)
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_ENV = re.compile(r"[A-Z_][A-Z0-9_]*")
_MANIFEST_KEYS = ("correlate_on", "schema", "buffer", "secret_env", "signature")
SIGNATURE_SCHEMES = ("tarry", "github", "slack")
"""How an HTTP sender signs the events of a type that declares ``secret_env``."""


@dataclass(frozen=True)
class Manifest:
    """The declaration of one event type."""

    type: str
    correlate_on: tuple[str, ...]
    schema: Mapping[str, Any] | None = None
    buffer: timedelta = DEFAULT_BUFFER
    secret_env: str | None = None
    signature: str | None = None
    """``tarry``, ``github`` or ``slack`` when ``secret_env`` is set (default ``tarry``)."""
    _validator: Validator | None = field(default=None, repr=False, compare=False)

    def problems(self, data: Any) -> list[str]:
        """Why ``data`` is not a valid payload of this type (empty when it is)."""
        if not isinstance(data, dict):
            return [f"the payload must be a JSON object, got {type(data).__name__}"]
        found = [f"missing correlation field '{key}'" for key in self.correlate_on
                 if key not in data]
        if self._validator is not None:
            found += validation_problems(self._validator, data)
        return found

    def key_of(self, data: Mapping[str, Any]) -> str:
        """The correlation key of a valid payload."""
        return correlation_key({name: data[name] for name in self.correlate_on})


Manifests = Mapping[str, Manifest]


def correlation_key(values: Mapping[str, Any]) -> str:
    """The canonical text of correlation values, equal for equal JSON-scalar renderings.

    Strings count as themselves and every other value as its JSON text as a store gives it
    back (:func:`tarry.values.load_json`: ``1e+20`` is ``100000000000000000000``), so ``5`` and
    ``"5"`` correlate, and so does a number whether or not it was read from the store; keys
    are sorted.
    """
    return json.dumps([[k, v if isinstance(v, str) else _stored_text(v)]
                       for k, v in sorted(values.items())], separators=(",", ":"))


def _stored_text(value: Any) -> str:
    return json.dumps(load_json(json.dumps(value)), sort_keys=True)


def load_manifests(paths: Iterable[Path], max_bytes: int = FILE_BYTES) -> dict[str, Manifest]:
    """The manifests declared in ``paths`` (missing files are skipped); LoadError if invalid
    (a file over ``max_bytes`` is refused before it is read)."""
    manifests: dict[str, Manifest] = {}
    problems: list[Problem] = []
    for path in paths:
        if not path.is_file():
            continue
        try:
            manifests.update(parse_manifests(read_source(path, max_bytes), str(path)))
        except LoadError as exc:
            problems += exc.problems
    if problems:
        raise LoadError(problems)
    return manifests


def parse_manifests(text: str, path: str) -> dict[str, Manifest]:
    """The manifests in one file's text; raises LoadError with every problem."""
    ctx = LoadContext(file=path, actions=frozenset())
    root, problems = read_yaml(text, path)
    ctx.problems.extend(problems)
    manifests: dict[str, Manifest] = {}
    if not isinstance(root, YamlMap):
        if root is not None or not problems:  # an unreadable file has said why already
            ctx.problems.append(Problem(path, 1, 1, "an event manifest file must be a "
                                                    "mapping with an 'events:' key"))
    else:
        Fields(ctx, root, "in an event manifest file", allowed=("events",),
               required={"events": ""})
        declared = root.get("events")
        events = read_mapping(ctx, declared.value, "events") if declared else None
        for entry in events.entries if events else ():
            read_name(ctx, YamlScalar(entry.key, entry.key_pos), "an event type")
            manifests[entry.key] = _manifest(ctx, entry.key, entry.value)
    if ctx.problems:
        raise LoadError(sorted(ctx.problems, key=lambda p: (p.file, p.line, p.column)))
    return manifests


def _manifest(ctx: LoadContext, name: str, node: YamlNode) -> Manifest:
    if not isinstance(node, YamlMap):
        ctx.report(node.pos, f"event type '{name}' must be a mapping with 'correlate_on'")
        return Manifest(name, ())
    fields = Fields(ctx, node, f"in event type '{name}'", allowed=_MANIFEST_KEYS,
                    required={"correlate_on": " (the payload fields that find the waiting run)"})
    schema = fields.read("schema", read_schema, None)
    secret_env = fields.read("secret_env", _read_env_name, None)
    signature = fields.read("signature", _read_signature, None)
    if signature is not None and secret_env is None:
        entry = node.get("signature")
        ctx.report(entry.key_pos if entry else node.pos,
                   f"event type '{name}': 'signature' needs 'secret_env' (the environment "
                   "variable holding the shared secret)")
    return Manifest(
        type=name,
        correlate_on=fields.read("correlate_on", _read_fields, ()),
        schema=schema,
        buffer=fields.read("buffer", _read_buffer, DEFAULT_BUFFER),
        secret_env=secret_env,
        signature=(signature or "tarry") if secret_env else None,
        _validator=None if schema is None else validator(schema),
    )


def _read_fields(ctx: LoadContext, node: YamlNode, key: str) -> tuple[str, ...]:
    items = node.items if isinstance(node, YamlSeq) else ()
    names = [item.value for item in items if isinstance(item, YamlScalar)
             and isinstance(item.value, str) and _FIELD.fullmatch(item.value)]
    if not items or len(names) != len(items):
        ctx.report(node.pos, f"'{key}' must be a list of one or more payload field names")
    elif len(set(names)) != len(names):
        ctx.report(node.pos, f"'{key}' names a field twice")
    return tuple(names)


def read_schema(ctx: LoadContext, node: YamlNode, key: str) -> dict[str, Any] | None:
    """A JSON Schema (2020-12) written in YAML, checked to be a valid one; None if not."""
    schema = to_plain(node)
    if not isinstance(schema, dict):
        ctx.report(node.pos, f"'{key}' must be a JSON Schema object")
        return None
    problem = schema_problem(schema)
    if problem is not None:
        ctx.report(_position(node, problem),
                   f"'{key}' is not a valid JSON Schema: {problem.message}")
        return None
    return schema


def _position(node: YamlNode, problem: SchemaProblem) -> Position:
    """Where in the file ``problem`` of the schema written at ``node`` is (as far down its
    path as the file goes): the value at its path, or the key that ends it."""
    position = node.pos
    for part in problem.path:
        if isinstance(node, YamlMap) and isinstance(part, str) and (entry := node.get(part)):
            node, position = entry.value, entry.key_pos if problem.key else entry.value.pos
        elif isinstance(node, YamlSeq) and isinstance(part, int) and part < len(node.items):
            node = node.items[part]
            position = node.pos
        else:
            break
    return position


def _read_buffer(ctx: LoadContext, node: YamlNode, key: str) -> timedelta:
    if isinstance(node, YamlScalar) and node.value == 0 and type(node.value) is int:
        return timedelta(0)
    return read_duration(ctx, node, key)


def _read_env_name(ctx: LoadContext, node: YamlNode, key: str) -> str:
    text = read_text(ctx, node, key)
    if text and not _ENV.fullmatch(text):
        ctx.report(node.pos, f"'{key}' must name an environment variable (e.g. "
                             "SLACK_SIGNING_SECRET)")
    return text


def _read_signature(ctx: LoadContext, node: YamlNode, key: str) -> str:
    text = read_text(ctx, node, key)
    if text and text not in SIGNATURE_SCHEMES:
        ctx.report(node.pos, f"'{key}' must be one of {', '.join(SIGNATURE_SCHEMES)}, got "
                             f"'{text}'{did_you_mean(text, SIGNATURE_SCHEMES)}")
    return text
