"""auth-service HTTP handlers: login, token verification and revocation.

The gateway calls ``POST /v1/auth/verify`` on every authenticated request, so verify must stay
cheap: no password hashing, one cache lookup.
"""

from __future__ import annotations

import hmac
import logging
import time
from typing import Callable, Protocol

from auth_service import config, tokens
from shop_common import Request, Response, ServiceApp, error_response, json_response

log = logging.getLogger("auth-service")


class CredentialStore(Protocol):
    """Password hashes by user id."""

    def get(self, user_id: str) -> tuple[bytes, bytes] | None:
        """(salt, hash) of the user's password, or None for an unknown user."""


class RevocationStore(Protocol):
    """Per-user "tokens issued before this instant are void" marks (redis in production)."""

    def revoked_before(self, user_id: str) -> float | None: ...

    def revoke(self, user_id: str, at: float) -> None: ...


class InMemoryCredentials:
    """A CredentialStore in a dict: local dev and tests."""

    def __init__(self, iterations: int = config.PASSWORD_HASH_ITERATIONS) -> None:
        self._iterations = iterations
        self._rows: dict[str, tuple[bytes, bytes]] = {}

    def add(self, user_id: str, password: str, salt: bytes = b"dev-salt") -> None:
        self._rows[user_id] = (salt, tokens.hash_password(password, salt, self._iterations))

    def get(self, user_id: str) -> tuple[bytes, bytes] | None:
        return self._rows.get(user_id)


class InMemoryRevocations:
    """A RevocationStore in a dict: local dev and tests."""

    def __init__(self) -> None:
        self._marks: dict[str, float] = {}

    def revoked_before(self, user_id: str) -> float | None:
        return self._marks.get(user_id)

    def revoke(self, user_id: str, at: float) -> None:
        self._marks[user_id] = at


class AuthApp(ServiceApp):
    """The auth-service app."""

    service = "auth-service"

    def __init__(self, credentials: CredentialStore, revocations: RevocationStore,
                 clock: Callable[[], float] = time.time,
                 iterations: int = config.PASSWORD_HASH_ITERATIONS) -> None:
        super().__init__()
        self._credentials = credentials
        self._revocations = revocations
        self._clock = clock
        self._iterations = iterations
        self.router.add("POST", "/v1/auth/login", self.login)
        self.router.add("POST", "/v1/auth/verify", self.verify)
        self.router.add("POST", "/v1/auth/revoke", self.revoke)

    def login(self, request: Request) -> Response:
        """Exchange a user id and password for a bearer token."""
        user_id = str(request.body.get("user_id", ""))
        password = str(request.body.get("password", ""))
        row = self._credentials.get(user_id)
        if row is None or not hmac.compare_digest(
                row[1], tokens.hash_password(password, row[0], self._iterations)):
            log.info("login refused for %r", user_id)
            return error_response(401, "bad_credentials", "unknown user or wrong password")
        token = tokens.issue(user_id, self._clock())
        return json_response(200, token=token, expires_in=config.TOKEN_TTL_S)

    def verify(self, request: Request) -> Response:
        """Check a token; 200 with the user id, or 401."""
        now = self._clock()
        try:
            user_id, expires_at = tokens.verify(str(request.body.get("token", "")), now)
        except tokens.InvalidToken as exc:
            return error_response(401, "invalid_token", str(exc))
        cutoff = self._revocations.revoked_before(user_id)
        if cutoff is not None and expires_at - config.TOKEN_TTL_S < cutoff:
            return error_response(401, "invalid_token", "token revoked")
        return json_response(200, user_id=user_id, expires_at=expires_at)

    def revoke(self, request: Request) -> Response:
        """Void every token of a user issued until now (logout everywhere)."""
        user_id = request.body.get("user_id")
        if not user_id:
            return error_response(422, "invalid_request", "user_id is required")
        self._revocations.revoke(str(user_id), self._clock())
        log.info("revoked sessions of %s", user_id)
        return json_response(200, user_id=user_id, revoked=True)
