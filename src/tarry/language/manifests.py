"""Event manifests: the declaration of each event type.

```yaml
events:
  slack.approval:
    correlate_on: [message]          # required: 1+ top-level payload fields, or key: path
    schema: { type: object, required: [message, approved] }   # optional JSON Schema
    buffer: 10m                      # optional; default 5m, 0 disables
    secret_env: SLACK_SIGNING_SECRET # optional; HTTP senders must sign with it
    signature: slack                 # optional with secret_env: tarry (default), github, slack
  github.issues:
    correlate_on: { issue: issue.number, repo: repository.full_name }   # key: dotted path
```

The paths are read as :mod:`tarry.language.correlation` says; a path that the type's schema
proves absent is refused at load.

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
from tarry.language.correlation import CorrelationPath, parse_path, schema_refutes, value_at
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
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_ENV = re.compile(r"[A-Z_][A-Z0-9_]*")
_MANIFEST_KEYS = ("correlate_on", "schema", "buffer", "secret_env", "signature")
SIGNATURE_SCHEMES = ("tarry", "github", "slack")
"""How an HTTP sender signs the events of a type that declares ``secret_env``."""


@dataclass(frozen=True)
class Manifest:
    """The declaration of one event type."""

    type: str
    correlate_on: tuple[str, ...]
    """The correlation key names: what a wait's ``match`` gives."""
    schema: Mapping[str, Any] | None = None
    buffer: timedelta = DEFAULT_BUFFER
    secret_env: str | None = None
    signature: str | None = None
    """``tarry``, ``github`` or ``slack`` when ``secret_env`` is set (default ``tarry``)."""
    paths: Mapping[str, CorrelationPath] = field(default_factory=dict)
    """Where each key's value is in the payload; a key not here is its own top-level field."""
    _validator: Validator | None = field(default=None, repr=False, compare=False)

    def path_of(self, key: str) -> CorrelationPath:
        """Where the value of the correlation key ``key`` is in a payload."""
        return self.paths.get(key, (key,))

    def path_texts(self) -> dict[str, str]:
        """Each correlation key's path, written dotted (a top-level key's is its name)."""
        return {key: ".".join(self.path_of(key)) for key in self.correlate_on}

    def problems(self, data: Any) -> list[str]:
        """Why ``data`` is not a valid payload of this type (empty when it is)."""
        if not isinstance(data, dict):
            return [f"the payload must be a JSON object, got {type(data).__name__}"]
        found = [problem for key in self.correlate_on
                 if (problem := value_at(data, self.path_of(key))[1]) is not None]
        if self._validator is not None:
            found += validation_problems(self._validator, data)
        return found

    def values_of(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The correlation values of a valid payload, by key name."""
        return {key: value_at(data, self.path_of(key))[0] for key in self.correlate_on}

    def key_of(self, data: Mapping[str, Any]) -> str:
        """The correlation key of a valid payload."""
        return correlation_key(self.values_of(data))


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
    keys: _Keys = fields.read("correlate_on", _read_correlation, {})
    _check_paths(ctx, name, schema, keys)
    return Manifest(
        type=name,
        correlate_on=tuple(keys),
        paths={key: path for key, (path, _) in keys.items() if path != (key,)},
        schema=schema,
        buffer=fields.read("buffer", _read_buffer, DEFAULT_BUFFER),
        secret_env=secret_env,
        signature=(signature or "tarry") if secret_env else None,
        _validator=None if schema is None else validator(schema),
    )


_Keys = dict[str, tuple[CorrelationPath, YamlNode]]
"""The correlation keys read: each key name's path, and the node that wrote it."""


def _read_correlation(ctx: LoadContext, node: YamlNode, key: str) -> _Keys:
    """``correlate_on``: a list of top-level field names, or a mapping of key names to
    paths."""
    if isinstance(node, YamlMap) and node.entries:
        return {entry.key: (path, entry.value) for entry in node.entries
                if (path := _read_key_path(ctx, entry.key, entry.key_pos, entry.value))}
    items = node.items if isinstance(node, YamlSeq) else ()
    names = [item.value for item in items
             if isinstance(item, YamlScalar) and isinstance(item.value, str)]
    if not items or len(names) != len(items):
        ctx.report(node.pos, f"'{key}' must be a list of one or more top-level payload field "
                             "names, or a mapping of key names to paths (e.g. {issue: "
                             "issue.number})")
        return {}
    if len(set(names)) != len(names):
        ctx.report(node.pos, f"'{key}' names a field twice")
    return {name: ((name,), item) for name, item in zip(names, items, strict=True)
            if _top_level(ctx, item, name)}


def _top_level(ctx: LoadContext, node: YamlNode, name: str) -> bool:
    if _KEY.fullmatch(name):
        return True
    if "." in name:
        last = next((part for part in reversed(name.split(".")) if _KEY.fullmatch(part)),
                    "key")
        ctx.report(node.pos, f"'correlate_on' lists top-level payload fields, and '{name}' is "
                             f"a path: give it a key name, e.g. correlate_on: {{{last}: {name}}}")
    else:
        ctx.report(node.pos, f"'{name}' is not a payload field name (letters, digits, '_' "
                             "and '-', not starting with a digit)")
    return False


def _read_key_path(ctx: LoadContext, name: str, name_pos: Position,
                   node: YamlNode) -> CorrelationPath | None:
    """One ``key: path`` entry of a mapping ``correlate_on``; None when it is wrong."""
    if not _KEY.fullmatch(name):
        ctx.report(name_pos, f"'{name}' is not a correlation key name (letters, digits, '_' "
                             "and '-', not starting with a digit)")
        return None
    if not isinstance(node, YamlScalar) or not isinstance(node.value, str):
        ctx.report(node.pos, f"the path of correlation key '{name}' must be a dotted path "
                             "into the payload (e.g. issue.number)")
        return None
    try:
        return parse_path(node.value)
    except ValueError as exc:
        ctx.report(node.pos, f"correlation key '{name}': {exc}")
        return None


def _check_paths(ctx: LoadContext, name: str, schema: Mapping[str, Any] | None,
                 keys: _Keys) -> None:
    """Refuse each path that no payload valid under the type's ``schema`` has a value at."""
    if schema is None:
        return
    for path, node in keys.values():
        refuted = schema_refutes(schema, path)
        if refuted is not None:
            ctx.report(node.pos, f"event type '{name}': no valid payload has a correlation "
                                 f"value at '{'.'.join(path)}': {refuted}")


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
