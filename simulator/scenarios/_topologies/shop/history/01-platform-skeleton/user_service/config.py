"""user-service configuration: database, profile cache and per-pod concurrency.

Memory per pod is roughly 150 MiB of interpreter and libraries, plus the profile cache, plus
about 2 MiB per in-flight request: keep the sum under the limit in deploy.yaml.
"""

import os

DATABASE_URL = os.environ.get("USER_DB_URL", "postgresql://users@postgres-db:5432/users")

PROFILE_CACHE_MAX_ENTRIES = 100_000
"""Profiles kept in memory per pod (~1.5 KiB each, ~150 MiB when full)."""

MAX_INFLIGHT_REQUESTS = 64
"""Requests a pod works on at once; more wait in the accept queue."""

AUTH_SERVICE = "auth-service"
AUTH_TIMEOUT_S = 1.5
