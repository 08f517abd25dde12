"""Grader checks for user-service-oom: all PASS_TO_PASS (the fix is operational: scale out).

The code at HEAD must keep fitting a pod in its memory limit: "absorbing" the traffic by raising
MAX_INFLIGHT_REQUESTS or the profile cache, or by lowering the limit, breaks these checks.
"""

import re

from api_gateway import Gateway
from auth_service import AuthApp, InMemoryCredentials, InMemoryRevocations, tokens
from shop_common import InProcessTransport, Request
from user_service import InMemoryUserStore, ProfileCache, UserApp, config

NOW = 1_700_000_000.0


def _limit_mib():
    text = open("user_service/deploy.yaml", encoding="utf-8").read()
    match = re.search(r"limits:\s*\{[^}]*memory:\s*(\d+)Mi", text)
    assert match, "deploy.yaml must give a memory limit in Mi"
    return int(match.group(1))


def test_pod_worst_case_memory_fits_its_limit():
    worst = 150 + config.PROFILE_CACHE_MAX_ENTRIES * 1.5 / 1024 + 2 * config.MAX_INFLIGHT_REQUESTS
    limit = _limit_mib()
    assert limit >= 512, f"the memory limit must stay at least 512Mi, got {limit}Mi"
    assert worst <= 0.9 * limit, f"worst case {worst:.0f} MiB does not fit {limit} MiB"
    assert config.MAX_INFLIGHT_REQUESTS <= 64, config.MAX_INFLIGHT_REQUESTS
    assert config.PROFILE_CACHE_MAX_ENTRIES <= 100_000, config.PROFILE_CACHE_MAX_ENTRIES


def test_profile_cache_stays_bounded():
    cache = ProfileCache(max_entries={{cache_probe}})
    for n in range(3 * {{cache_probe}}):
        cache.put(f"u-{n}", {"display_name": str(n)})
    assert len(cache) == {{cache_probe}}, len(cache)
    assert cache.get(f"u-{3 * {{cache_probe}} - 1}") is not None


def test_profiles_served_through_the_gateway():
    auth = AuthApp(InMemoryCredentials(iterations=1), InMemoryRevocations(), clock=lambda: NOW)
    store = InMemoryUserStore({"u-7": {"email": "kai@example.com", "display_name": "Kai",
                                       "locale": "de-DE"}})
    transport = InProcessTransport({"auth-service": auth})
    transport.register("user-service", UserApp(store, transport))
    headers = {"Authorization": "Bearer " + tokens.issue("u-7", NOW)}
    answer = Gateway(transport).handle(Request("GET", "/v1/users/u-7", headers=headers))
    assert answer.status == 200 and answer.body.get("display_name") == "Kai", answer
    other = Gateway(transport).handle(Request("GET", "/v1/users/u-8", headers=headers))
    assert other.status == 403, other
