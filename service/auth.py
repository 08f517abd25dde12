"""Secrets: join tokens per seat, resume tokens, and the admin token of control calls.

Tokens come from `secrets`, are compared with `hmac.compare_digest`, and are never logged.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Sequence

from metasre.service.errors import TokenInvalidError, TokenMissingError

TOKEN_BYTES = 24
"""Entropy of every token, in bytes."""


def new_token() -> str:
    """A fresh unguessable token (URL-safe text)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def same(given: str, expected: str | None) -> bool:
    """Constant-time comparison; False when nothing is expected."""
    if expected is None:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def check_admin(metadata: Sequence[tuple[str, str | bytes]], admin_token: str | None) -> None:
    """Let a control call through when the server has no admin token or the call carries it.

    Raises:
        TokenMissingError: the server needs an admin token and the call has none.
        TokenInvalidError: the call's admin token is wrong.
    """
    if admin_token is None:
        return
    given = bearer(metadata)
    if given is None:
        raise TokenMissingError(
            "this server needs an admin token for control calls: send the metadata "
            "'authorization: Bearer <token>'"
        )
    if not same(given, admin_token):
        raise TokenInvalidError("the admin token is wrong")


def bearer(metadata: Sequence[tuple[str, str | bytes]]) -> str | None:
    """The token of an `authorization: Bearer <token>` metadata entry, if any."""
    for key, value in metadata:
        if key.lower() == "authorization" and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


def require_token(token: str) -> str:
    """`token`, or TokenMissingError when it is empty."""
    if not token:
        raise TokenMissingError("no token given: present the seat's join token or resume token")
    return token
