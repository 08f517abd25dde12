"""user-service sizing: config.py's worst case must fit the memory limit in deploy.yaml."""

import re

from user_service import ProfileCache, config

BASE_MIB = 150
PROFILE_KIB = 1.5
INFLIGHT_MIB = 2


def _limit_mib():
    text = open("user_service/deploy.yaml", encoding="utf-8").read()
    match = re.search(r"limits:\s*\{[^}]*memory:\s*(\d+)Mi", text)
    assert match, "deploy.yaml must give a memory limit in Mi"
    return int(match.group(1))


def _worst_case_mib():
    cache = config.PROFILE_CACHE_MAX_ENTRIES * PROFILE_KIB / 1024
    return BASE_MIB + cache + INFLIGHT_MIB * config.MAX_INFLIGHT_REQUESTS


def test_worst_case_memory_fits_the_limit_with_headroom():
    limit, worst = _limit_mib(), _worst_case_mib()
    assert worst <= 0.9 * limit, f"worst case {worst:.0f} MiB leaves under 10% of {limit} MiB"


def test_profile_cache_is_bounded():
    cache = ProfileCache(max_entries=3)
    for n in range(10):
        cache.put(f"u-{n}", {"display_name": str(n)})
    assert len(cache) == 3, len(cache)
    assert cache.get("u-9") is not None and cache.get("u-0") is None
