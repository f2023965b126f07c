"""Who is calling: bearer tokens and the principals they stand for.

``TARRY_API_TOKEN`` is the token of the principal ``api``; ``TARRY_API_TOKENS=name=token,…``
names more principals (a task's ``assign`` and ``by`` use the names). With no token at all
the API is open, and :func:`check_bind` refuses any address but a loopback one; beyond
loopback it also refuses a token shorter than :data:`MIN_PUBLIC_TOKEN`, which could be
guessed.

Tokens are compared in constant time, against every configured token whatever the first
comparison said, so neither the timing nor the order of the tokens tells anything. Tokens
never appear in a log line, a message or a ``repr``.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from tarry.config import Settings
from tarry.errors import ConfigError
from tarry.server.requestlog import note_principal

__all__ = ["ANONYMOUS", "MIN_PUBLIC_TOKEN", "SINGLE_TOKEN_PRINCIPAL", "Principal", "Principals",
           "Unauthorized", "bearer_token", "check_bind", "is_loopback", "principal_of_request"]

SINGLE_TOKEN_PRINCIPAL = "api"
"""The principal of ``TARRY_API_TOKEN``."""

ANONYMOUS = "anonymous"
"""The principal of every request when no token is configured (a loopback-only server)."""

MIN_PUBLIC_TOKEN = 16
"""The fewest characters a token may have on a server that listens beyond loopback."""

_SCHEME = "bearer"


class Unauthorized(Exception):
    """The request carries no valid credentials (HTTP 401)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class Principals:
    """The configured principals and their tokens."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        """``tokens`` maps a principal's name to its token."""
        self._tokens = [(name, token.encode()) for name, token in tokens.items()]

    @classmethod
    def from_settings(cls, settings: Settings) -> Principals:
        """The principals of ``TARRY_API_TOKEN`` and ``TARRY_API_TOKENS``."""
        tokens = dict(settings.api_tokens)
        if settings.api_token:
            if SINGLE_TOKEN_PRINCIPAL in tokens:
                raise ConfigError(f"TARRY_API_TOKENS: the principal "
                                  f"'{SINGLE_TOKEN_PRINCIPAL}' is TARRY_API_TOKEN's; name "
                                  "that principal differently")
            tokens[SINGLE_TOKEN_PRINCIPAL] = settings.api_token
        return cls(tokens)

    @property
    def required(self) -> bool:
        """Whether any token is configured (then every protected call needs one)."""
        return bool(self._tokens)

    def short(self, minimum: int) -> list[tuple[str, int]]:
        """The principals whose tokens are shorter than ``minimum`` characters, with the
        length of each (never the token)."""
        return [(name, len(token.decode())) for name, token in self._tokens
                if len(token.decode()) < minimum]

    @property
    def names(self) -> tuple[str, ...]:
        """The principals' names."""
        return tuple(name for name, _ in self._tokens)

    def authenticate(self, token: str | None) -> str | None:
        """The principal whose token ``token`` is, or None; constant time in ``token``."""
        if not self.required:
            return ANONYMOUS
        offered = (token or "").encode()
        found: str | None = None
        for name, expected in self._tokens:
            if hmac.compare_digest(offered, expected):
                found = name
        return found

    def __repr__(self) -> str:
        return f"Principals({list(self.names)!r})"


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != _SCHEME or not token.strip():
        return None
    return token.strip()


_BEARER = HTTPBearer(auto_error=False, description="TARRY_API_TOKEN, or one token of "
                                                    "TARRY_API_TOKENS")


def principal_of_request(
        request: Request,
        _scheme: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)] = None,
) -> str:
    """The principal of a request's bearer token; raises :class:`Unauthorized`.

    (``_scheme`` only declares the bearer scheme in the OpenAPI document.)
    """
    principals: Principals = request.app.state.principals
    header = request.headers.get("authorization")
    principal = principals.authenticate(bearer_token(header))
    if principal is not None:
        note_principal(request, principal)
        return principal
    raise Unauthorized("this endpoint needs 'Authorization: Bearer <token>' with a valid "
                       "token" if header else
                       "this endpoint needs 'Authorization: Bearer <token>'; none was sent")


Principal = Annotated[str, Depends(principal_of_request)]
"""A route parameter of this type is the calling principal (401 without valid credentials)."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) only accepts local connections."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, principals: Principals) -> None:
    """Refuse to listen beyond this machine when no token protects the API, or when a token
    is shorter than :data:`MIN_PUBLIC_TOKEN` characters."""
    if is_loopback(host):
        return
    if not principals.required:
        raise ConfigError(f"refusing to listen on {host} without an API token: anyone who "
                          "can reach it could start and cancel runs; set TARRY_API_TOKEN (or "
                          "TARRY_API_TOKENS), or listen on 127.0.0.1")
    for name, length in principals.short(MIN_PUBLIC_TOKEN):
        variable = ("TARRY_API_TOKEN" if name == SINGLE_TOKEN_PRINCIPAL
                    else f"the token of '{name}' in TARRY_API_TOKENS")
        raise ConfigError(f"refusing to listen on {host}: {variable} is {length} "
                          f"character{'s' if length != 1 else ''} long, and a token must have "
                          f"at least {MIN_PUBLIC_TOKEN} beyond 127.0.0.1 (make one with "
                          "'openssl rand -hex 32'), or listen on 127.0.0.1")
