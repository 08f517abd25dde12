"""Secrets: join tokens per seat, resume tokens, and the admin token of control calls.

Tokens come from `secrets`, are compared with `hmac.compare_digest`, and are never logged.

Seat tokens are never stored: a session keeps (and the trajectory store records) only their
SHA-256 digests, which is enough to check a presented token after a restart. A seat's resume
token is an HMAC of its join token under a per-session key (`resume_token_for`), so a server
rebuilt from the store can hand it out again on a join without ever having stored it; the key
alone, or the store alone, opens no seat.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Sequence

from .errors import NotSessionOwnerError, TokenInvalidError, TokenMissingError

TOKEN_BYTES = 24
"""Entropy of every token, in bytes."""


def new_token() -> str:
    """A fresh unguessable token (URL-safe text)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def digest(token: str) -> str:
    """The SHA-256 of a token, hex: what is kept in place of the token itself."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def matches(given: str, expected_digest: str) -> bool:
    """Whether `given` is the token whose digest is `expected_digest` (constant time)."""
    return hmac.compare_digest(digest(given), expected_digest)


def new_key() -> bytes:
    """A fresh per-session key for `resume_token_for`."""
    return secrets.token_bytes(32)


def resume_token_for(key: bytes, join_token: str) -> str:
    """The resume token of the seat whose join token is `join_token` (URL-safe text)."""
    mac = hmac.new(key, b"metasre resume token\0" + join_token.encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()[:TOKEN_BYTES]).decode().rstrip("=")


def seat_join_token(owner_token: str, request_id: str, agent_id: str) -> str:
    """The join token of seat `agent_id` in the session made by CreateSession `request_id`.

    Derived from the owner token, which the server never keeps, so that a retry of the same
    request (which must carry the same owner token) gets the very tokens of the first answer,
    even from a server restarted since. The owner is given every join token anyway; a join
    token tells nothing of the owner token or of another seat's token.
    """
    message = f"metasre join token\0{request_id}\0{agent_id}".encode("utf-8", "surrogatepass")
    mac = hmac.new(owner_token.encode("utf-8", "surrogatepass"), message, hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()[:TOKEN_BYTES]).decode().rstrip("=")


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


def is_admin(metadata: Sequence[tuple[str, str | bytes]], admin_token: str | None) -> bool:
    """Whether the call carries the server's admin token (never, when the server has none)."""
    given = bearer(metadata)
    return given is not None and same(given, admin_token)


def check_owner(
    metadata: Sequence[tuple[str, str | bytes]],
    admin_token: str | None,
    owner_digest: str | None,
) -> None:
    """Let a control call on a session through with its owner token or the admin token.

    Holds whether or not the server has an admin token: a session belongs to whoever created
    it. A session stored by a server without owners (`owner_digest` None) answers the admin
    only.

    Raises:
        TokenMissingError: the call carries no token.
        NotSessionOwnerError: the token is neither the session's owner token nor the admin's.
    """
    given = require_bearer(metadata)
    if same(given, admin_token):
        return
    if owner_digest is None or not matches(given, owner_digest):
        raise NotSessionOwnerError(
            "this token is not the owner token of the session (the one CreateSession returned"
            " for it) nor the admin token"
        )


def require_bearer(metadata: Sequence[tuple[str, str | bytes]]) -> str:
    """The bearer token a control call on a session carries.

    Raises:
        TokenMissingError: it carries none.
    """
    given = bearer(metadata)
    if given is None:
        raise TokenMissingError(
            "control calls on a session need its owner token (CreateSessionResponse."
            "owner_token) or the admin token: send the metadata 'authorization: Bearer <token>'"
        )
    return given


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
