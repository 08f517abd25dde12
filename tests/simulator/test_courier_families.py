"""The courier platform's families (bad-config-push, retry-storm, disk-full) are their data.

Their files are written from the platform's data by `tools/families/` (the platform's module
and each family's axes module, held to the committed files by tests/simulator/test_authoring.py).
Each family's structure is what its head says: every seed's fault sits on a service its
platform runs, and its remedy is a key.
"""

import pytest

from metasre.simulator import Episode, resolve
from tools.families import courier as families

IDS = {
    "bad_config_push": "meta-sre/bad-config-push-v1",
    "retry_storm": "meta-sre/retry-storm-v1",
    "disk_full": "meta-sre/disk-full-v1",
}


@pytest.mark.parametrize("family", families.FAMILIES)
def test_every_site_runs_on_a_platform_that_has_its_services(family):
    entry = resolve(IDS[family])
    sites = len(families.family_sites(family))
    seen = set()
    for seed in range(sites):  # the first cycle of the axis meets every site once
        spec = entry.spec(seed)
        running = {s.name for s in spec.services}
        assert 10 <= len(running) <= 14, (seed, sorted(running))
        assert spec.ground_truth.service in running
        assert set(spec.ground_truth.symptom_services) <= running
        seen.add((spec.ground_truth.service, spec.ground_truth.location))
    assert len(seen) == sites


def _seed_where(family_id, axis, key):
    entry = resolve(family_id)
    return next(s for s in range(40) if entry.instance(s).values[axis]["key"] == key)


def _site(family_id, seed):
    return resolve(family_id).instance(seed).values["site"]


def test_bad_config_reverting_the_newest_push_reverts_the_wrong_key():
    family = IDS["bad_config_push"]
    seed = _seed_where(family, "herring", "same-service-later")
    site = _site(family, seed)
    naive = Episode.make(family, seed)
    naive.apply("a", "rollback_config", {"service": site["service"]})
    assert not naive.grade().resolved
    right = Episode.make(family, seed)
    args = {"service": site["service"], "key": site["config_key"], "value": site["good"]}
    right.apply("a", "set_config", args)
    assert right.grade().resolved


def test_retry_storm_is_not_cured_at_the_dependency_and_any_sane_setting_cures_it():
    family = IDS["retry_storm"]
    for seed in (0, 3, 7):
        site = _site(family, seed)
        dep = site["dependency"]
        for tool, args in (
            ("scale_service", {"service": dep, "replicas": 12}),
            ("restart_service", {"service": dep}),
        ):
            ep = Episode.make(family, seed)
            ep.apply("a", tool, args)
            assert not ep.grade().resolved, (seed, tool)
        # The runbook's bound, not the value before the push, is what the checks hold it to.
        sane = 3 if site["setting"] == "retries" else 50
        ep = Episode.make(family, seed)
        ep.apply(
            "a",
            "set_config",
            {"service": site["service"], "key": site["config_key"], "value": sane},
        )
        assert ep.grade().resolved, seed


def test_disk_full_needs_the_log_level_and_the_cleaning():
    family = IDS["disk_full"]
    for seed in (0, 4):
        service = _site(family, seed)["service"]
        level = {"service": service, "key": "log_level", "value": "INFO"}
        for calls in ([("clean_disk", {"service": service})], [("set_config", level)]):
            ep = Episode.make(family, seed)
            for tool, args in calls:
                ep.apply("a", tool, args)
            assert not ep.grade().resolved, (seed, calls)
        ep = Episode.make(family, seed)
        ep.apply("a", "set_config", level)
        ep.apply("a", "clean_disk", {"service": service})
        assert ep.grade().resolved, seed
