"""Keeping secrets out of what tarry prints, logs and stores.

Two kinds of secret are masked as ``***`` wherever a text leaves tarry (an error message, a
log line, ``tarry doctor``'s findings) and before an action's error text is written to a
run's history:

- **passwords in database URLs**, found by their shape in any text: the password of
  ``postgresql://user:password@host/db``, a ``?password=…`` URL parameter and a
  ``password=…`` pair of a ``key=value`` connection string;
- **the values of secret variables**, wherever they occur: ``TARRY_API_TOKEN``, each token of
  ``TARRY_API_TOKENS``, the variable every event type names as its ``secret_env``, and the
  database password. A value shorter than :data:`MIN_SECRET_LENGTH` characters is not
  searched for (masking every ``a`` of a message protects nothing).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, unquote, urlsplit

if TYPE_CHECKING:
    from tarry.language.manifests import Manifest

__all__ = ["MASK", "MIN_SECRET_LENGTH", "RedactingFilter", "Redactor", "database_password",
           "environment_tokens", "redact_database_url", "secret_values", "unset_secrets"]

MASK = "***"
"""What a secret is replaced with."""

MIN_SECRET_LENGTH = 4
"""The shortest secret value searched for in texts."""

_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)([^@\s/]+)(@)", re.IGNORECASE)
_PAIR_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&'\"]+)",
                            re.IGNORECASE)
_CONNINFO_PASSWORD = re.compile(r"\bpassword\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']+)", re.IGNORECASE)


def redact_database_url(text: str) -> str:
    """``text`` with every database password masked: a URL's ``user:password@``, a
    ``password=`` parameter or connection-string pair."""
    masked = _URL_PASSWORD.sub(rf"\g<1>{MASK}\g<3>", text)
    return _PAIR_PASSWORD.sub(rf"\g<1>{MASK}", masked)


def database_password(url: str) -> str | None:
    """The password a database URL or ``key=value`` connection string carries, if any."""
    if "://" not in url:
        found = _CONNINFO_PASSWORD.search(url)
        return None if found is None else _unquoted(found.group(1))
    parts = urlsplit(url)
    if parts.password:
        return unquote(parts.password)
    return next((value for key, value in parse_qsl(parts.query) if key == "password"), None)


def secret_values(*, database: str, tokens: Iterable[str | None] = (),
                  environ: Mapping[str, str] | None = None,
                  secret_envs: Iterable[str] = ()) -> tuple[str, ...]:
    """The secret values of a deployment: the API ``tokens``, the ``database`` password and
    the values of the ``secret_envs`` variables set in ``environ``."""
    found = [*tokens, database_password(database),
             *((environ or {}).get(name) for name in secret_envs)]
    return tuple(dict.fromkeys(value.strip() for value in found if value and value.strip()))


def unset_secrets(manifests: Mapping[str, Manifest], environ: Mapping[str, str]) -> list[str]:
    """What is wrong with each signed event type whose ``secret_env`` variable is unset or
    empty in ``environ``: its senders' signatures could not be checked, so ``tarry serve``
    refuses to start and ``tarry doctor`` reports it as an error."""
    return [f"event type '{manifest.type}' declares secret_env {manifest.secret_env}, but "
            f"{manifest.secret_env} is not set: its senders' signatures could not be checked"
            for _, manifest in sorted(manifests.items())
            if manifest.secret_env is not None and not environ.get(manifest.secret_env)]


def environment_tokens(environ: Mapping[str, str]) -> list[str]:
    """The API tokens of ``TARRY_API_TOKEN`` and ``TARRY_API_TOKENS`` (``name=token,…``)."""
    named = environ.get("TARRY_API_TOKENS", "").split(",")
    return [environ.get("TARRY_API_TOKEN", ""), *(pair.partition("=")[2] for pair in named)]


@dataclass(frozen=True)
class Redactor:
    """Masks database passwords and the given secret values in texts."""

    secrets: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # longest first, so a secret that contains another is masked whole
        kept = sorted((s for s in self.secrets if len(s) >= MIN_SECRET_LENGTH), key=len,
                      reverse=True)
        object.__setattr__(self, "secrets", tuple(kept))

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Redactor:
        """The secrets the environment alone names: the API tokens and the password of
        ``TARRY_DATABASE`` (for output made before, or without, a project's settings)."""
        env = os.environ if environ is None else environ
        return cls(secret_values(database=env.get("TARRY_DATABASE", ""),
                                 tokens=environment_tokens(env)))

    def __call__(self, text: str) -> str:
        """``text`` with every secret masked."""
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return redact_database_url(text)


class RedactingFilter(logging.Filter):
    """A log handler's filter that masks secrets in each record's message and traceback."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite ``record`` with its secrets masked; every record passes."""
        record.msg, record.args = self.redactor(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor(record.exc_text)
        return True


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value
