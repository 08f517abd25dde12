"""auth-service configuration: token lifetime, password hashing cost and the session cache."""

import os

TOKEN_TTL_S = 3600
"""Lifetime of a bearer token."""

SIGNING_KEY = os.environ.get("AUTH_SIGNING_KEY", "dev-only-signing-key")
"""HMAC key for tokens; production reads it from the auth-signing-key secret."""

PASSWORD_HASH_ITERATIONS = 210_000
"""PBKDF2-SHA256 rounds (OWASP 2023 guidance). A login costs ~80 ms of CPU at this setting."""

SESSION_CACHE_URL = os.environ.get("AUTH_REDIS_URL", "redis://redis-cache:6379/0")
"""Where revocations live, so every replica sees a logout at once."""

WORKERS_PER_REPLICA = 4
"""Worker threads per pod; token checks queue behind logins when all are busy."""
