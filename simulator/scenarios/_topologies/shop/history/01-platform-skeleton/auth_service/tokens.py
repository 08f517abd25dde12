"""Signed bearer tokens: ``<user_id>.<expires_at>.<signature>``, signed with HMAC-SHA256."""

from __future__ import annotations

import base64
import hashlib
import hmac

from auth_service import config


class InvalidToken(Exception):
    """Raised when a token is malformed, forged or expired."""


def issue(user_id: str, now: float, key: str = config.SIGNING_KEY,
          ttl_s: int = config.TOKEN_TTL_S) -> str:
    """A token for `user_id`, valid for `ttl_s` seconds from `now`."""
    payload = f"{user_id}.{int(now) + ttl_s}"
    return f"{payload}.{_sign(payload, key)}"


def verify(token: str, now: float, key: str = config.SIGNING_KEY) -> tuple[str, int]:
    """Check a token; return (user_id, expires_at) or raise InvalidToken."""
    try:
        user_id, expires_at, signature = token.rsplit(".", 2)
        expiry = int(expires_at)
    except ValueError as exc:
        raise InvalidToken("malformed token") from exc
    if not hmac.compare_digest(signature, _sign(f"{user_id}.{expires_at}", key)):
        raise InvalidToken("bad signature")
    if now >= expiry:
        raise InvalidToken("token expired")
    return user_id, expiry


def hash_password(password: str, salt: bytes, iterations: int) -> bytes:
    """PBKDF2-SHA256 of a password."""
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)


def _sign(payload: str, key: str) -> str:
    digest = hmac.new(key.encode(), payload.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
