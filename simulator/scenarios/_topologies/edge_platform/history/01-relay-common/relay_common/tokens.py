"""Access tokens: claims signed by auth-service and verified by every API.

A token is `base64(claims).base64(hmac)`. Verification allows LEEWAY_SECONDS of clock
difference between the issuer and the verifier, no more.
"""

import base64
import hashlib
import hmac
import json

LEEWAY_SECONDS = 30


class TokenError(Exception):
    """A token was refused."""


class BadSignature(TokenError):
    """The token was not signed with the key we trust."""


class NotYetValid(TokenError):
    """The token's nbf (or iat) is in the future beyond the leeway."""


class Expired(TokenError):
    """The token's exp is in the past beyond the leeway."""


class WrongAudience(TokenError):
    """The token was issued for another service."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def issue(subject, audience, scope, key, now, ttl_seconds=900):
    """A token for `subject`, valid from `now` for `ttl_seconds` (issuer's clock)."""
    claims = {
        "sub": subject,
        "aud": audience,
        "scope": sorted(scope),
        "iat": int(now),
        "nbf": int(now),
        "exp": int(now) + ttl_seconds,
    }
    body = _b64(json.dumps(claims, sort_keys=True).encode())
    mac = hmac.new(key, body.encode(), hashlib.sha256).digest()
    return body + "." + _b64(mac)


def verify(token, key, audience, now, leeway=LEEWAY_SECONDS):
    """The claims of `token` if it is genuine, for `audience`, and valid at `now`."""
    body, _, mac = token.partition(".")
    expected = hmac.new(key, body.encode(), hashlib.sha256).digest()
    if not mac or not hmac.compare_digest(_unb64(mac), expected):
        raise BadSignature("token signature does not match")
    claims = json.loads(_unb64(body))
    if claims["aud"] != audience:
        raise WrongAudience(f"token for {claims['aud']}, not {audience}")
    if now + leeway < claims["nbf"]:
        raise NotYetValid(f"token not yet valid: nbf is {claims['nbf'] - now:.0f} s ahead")
    if now - leeway >= claims["exp"]:
        raise Expired(f"token expired {now - claims['exp']:.0f} s ago")
    return claims
