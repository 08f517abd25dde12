"""Grader probes for user-service-oom (never shown to agents): all PASS_TO_PASS (the fix is
operational: scale out).

Each probe calls the services' code on fixed inputs and returns what it observed as plain
data; it decides nothing. The grader runs the same probes on the reference solution's code and
compares the observations there, so the expected values are written nowhere in this file.

The code at HEAD must keep fitting a pod in its memory limit: "absorbing" the traffic by raising
MAX_INFLIGHT_REQUESTS or the profile cache, or by lowering the limit, changes what these see.
"""

import os
import re

from api_gateway import Gateway
from auth_service import AuthApp, InMemoryCredentials, InMemoryRevocations, tokens
from shop_common import InProcessTransport, Request
from user_service import InMemoryUserStore, ProfileCache, UserApp, config

NOW = 1_700_000_000.0
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _limit_mib():
    """The pod's memory limit in Mi from deploy.yaml, or None when it gives none."""
    path = os.path.join(ROOT, "user_service", "deploy.yaml")
    if not os.path.exists(path):
        path = "user_service/deploy.yaml"
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    match = re.search(r"limits:\s*\{[^}]*memory:\s*(\d+)Mi", text)
    return int(match.group(1)) if match else None


def pod_worst_case_memory_fits_its_limit():
    worst = 150 + config.PROFILE_CACHE_MAX_ENTRIES * 1.5 / 1024 + 2 * config.MAX_INFLIGHT_REQUESTS
    return {
        "limit_mib": _limit_mib(),
        "worst_case_mib": round(worst, 6),
        "max_inflight_requests": config.MAX_INFLIGHT_REQUESTS,
        "profile_cache_max_entries": config.PROFILE_CACHE_MAX_ENTRIES,
    }


def profile_cache_stays_bounded():
    cache = ProfileCache(max_entries={{cache_probe}})
    for n in range(3 * {{cache_probe}}):
        cache.put(f"u-{n}", {"display_name": str(n)})
    return {
        "size": len(cache),
        "newest_kept": cache.get(f"u-{3 * {{cache_probe}} - 1}") is not None,
    }


def profiles_served_through_the_gateway():
    auth = AuthApp(InMemoryCredentials(iterations=1), InMemoryRevocations(), clock=lambda: NOW)
    store = InMemoryUserStore({"u-7": {"email": "kai@example.com", "display_name": "Kai",
                                       "locale": "de-DE"}})
    transport = InProcessTransport({"auth-service": auth})
    transport.register("user-service", UserApp(store, transport))
    headers = {"Authorization": "Bearer " + tokens.issue("u-7", NOW)}
    answer = Gateway(transport).handle(Request("GET", "/v1/users/u-7", headers=headers))
    other = Gateway(transport).handle(Request("GET", "/v1/users/u-8", headers=headers))
    return {
        "own": {"status": answer.status, "display_name": answer.body.get("display_name")},
        "other": other.status,
    }
