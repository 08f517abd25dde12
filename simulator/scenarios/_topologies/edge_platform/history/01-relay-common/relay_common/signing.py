"""Signed requests, webhooks and presigned URLs: a timestamp and an HMAC over it.

The receiver accepts a signature whose timestamp is within WINDOW_SECONDS of its own clock, in
either direction, so a replayed request goes stale and a sender's drifting clock shows up as
"signature expired" (sender behind) or "timestamp in the future" (sender ahead).
"""

import hashlib
import hmac

WINDOW_SECONDS = 300


class SignatureError(Exception):
    """A signature was refused."""


class StaleSignature(SignatureError):
    """The signed timestamp is older than the window."""


class FutureSignature(SignatureError):
    """The signed timestamp is ahead of the receiver by more than the window."""


class BadSignature(SignatureError):
    """The MAC does not match."""


def _mac(key, timestamp, payload):
    return hmac.new(key, f"{int(timestamp)}.".encode() + payload, hashlib.sha256).hexdigest()


def sign(payload, key, now):
    """The `t=...,v1=...` header for `payload`, stamped with the sender's clock."""
    return f"t={int(now)},v1={_mac(key, now, payload)}"


def check(header, payload, key, now, window=WINDOW_SECONDS):
    """The signed timestamp if `header` signs `payload` and is fresh at `now`."""
    parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
    timestamp = int(parts.get("t", "0"))
    if not hmac.compare_digest(parts.get("v1", ""), _mac(key, timestamp, payload)):
        raise BadSignature("signature mismatch")
    if timestamp < now - window:
        raise StaleSignature(f"signature expired: timestamp {now - timestamp:.0f} s old")
    if timestamp > now + window:
        raise FutureSignature(f"signature timestamp {timestamp - now:.0f} s in the future")
    return timestamp


def presign(path, key, now, ttl_seconds=600):
    """A presigned URL for `path`, valid for `ttl_seconds` from the signer's clock."""
    expires = int(now) + ttl_seconds
    mac = _mac(key, expires, path.encode())
    return f"{path}?X-Expires={expires}&X-Signature={mac}"


def check_presigned(url, key, now):
    """The path of a presigned URL if its signature matches and it has not expired."""
    path, _, query = url.partition("?")
    params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
    expires = int(params.get("X-Expires", "0"))
    if not hmac.compare_digest(params.get("X-Signature", ""), _mac(key, expires, path.encode())):
        raise BadSignature("presigned URL signature mismatch")
    if now >= expires:
        raise StaleSignature(f"presigned URL expired {now - expires:.0f} s ago")
    return path
