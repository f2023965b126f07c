"""Who looks at the dashboard, and proof that a form came from it.

With a token configured, a person signs in once with a token on the sign-in form; the
dashboard then keeps a **session cookie**: the principal and a CSRF token, signed
(``itsdangerous``) with a key derived from every configured token, so changing or revoking a
token ends every session, and several servers with the same tokens accept each other's
sessions. It expires after :data:`MAX_AGE`. Without a token the dashboard is open (the
server listens on loopback only) and the cookie carries only the CSRF token, signed with a
key made when the server starts.

Every state-changing form carries the session's CSRF token in a hidden field; a form
without it, or with another session's, is refused. The cookie is ``HttpOnly`` and
``SameSite=Lax`` (``Secure`` over HTTPS).

Signing out revokes the session on the server that signs it out: a copy of its cookie kept
elsewhere opens nothing there any more. The server remembers the last
:data:`REVOKED_KEPT` sessions signed out, in memory (a restart, or another server, knows
only the cookie's signature and expiry).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections import OrderedDict
from dataclasses import dataclass

from itsdangerous import BadSignature, URLSafeTimedSerializer

from tarry.config import Settings

__all__ = ["COOKIE", "CSRF_FIELD", "MAX_AGE", "REVOKED_KEPT", "Session", "Sessions"]

COOKIE = "tarry_session"
"""The name of the dashboard's session cookie."""

CSRF_FIELD = "csrf"
"""The hidden form field that carries the CSRF token."""

MAX_AGE = 12 * 3600
"""How long a session lasts, in seconds (a working day)."""

REVOKED_KEPT = 10_000
"""How many signed-out sessions a server remembers (the oldest is forgotten first)."""

_SALT = "tarry.dashboard.session"


@dataclass(frozen=True)
class Session:
    """A browser's session: who signed in (None: nobody yet) and its CSRF token."""

    principal: str | None
    csrf: str

    @classmethod
    def fresh(cls, principal: str | None) -> Session:
        """A new session for ``principal`` with a new CSRF token."""
        return cls(principal, secrets.token_urlsafe(32))

    def accepts(self, token: str | None) -> bool:
        """Whether ``token`` is this session's CSRF token (compared in constant time)."""
        return hmac.compare_digest((token or "").encode(), self.csrf.encode())


class Sessions:
    """Signs sessions into cookie values and reads them back."""

    def __init__(self, key: bytes, *, max_age: int = MAX_AGE) -> None:
        self._serializer = URLSafeTimedSerializer(key, salt=_SALT)
        self.max_age = max_age
        self._revoked: OrderedDict[str, None] = OrderedDict()

    @classmethod
    def for_settings(cls, settings: Settings, *, max_age: int = MAX_AGE) -> Sessions:
        """Sessions keyed by the configured tokens, or by a random key when there are none."""
        tokens = dict(settings.api_tokens)
        if settings.api_token:
            tokens["\0single"] = settings.api_token
        if not tokens:
            return cls(secrets.token_bytes(32), max_age=max_age)
        material = json.dumps(sorted(tokens.items())).encode()
        key = hmac.new(b"tarry dashboard sessions", material, hashlib.sha256).digest()
        return cls(key, max_age=max_age)

    def dump(self, session: Session) -> str:
        """The cookie value of ``session``."""
        return self._serializer.dumps({"p": session.principal, "c": session.csrf})

    def load(self, value: str | None) -> Session | None:
        """The session a cookie value holds; None when it is missing, forged or expired."""
        if not value:
            return None
        try:
            data = self._serializer.loads(value, max_age=self.max_age)
        except BadSignature:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("c"), str) \
                or data["c"] in self._revoked:
            return None
        principal = data.get("p")
        return Session(principal if isinstance(principal, str) else None, data["c"])

    def revoke(self, session: Session) -> None:
        """Make ``session`` count for nothing from now on (it is known by its CSRF token,
        which no other session has)."""
        self._revoked[session.csrf] = None
        while len(self._revoked) > REVOKED_KEPT:
            self._revoked.popitem(last=False)
