"""The edge platform's knob families (clock-skew, feature-flag-rollout, tls-cert-expiry) are
their data, and each structure's evidence leads from the page to the knob that is off.

Their tables are written by each family's module in `tools/families/axes/` (held to the
committed files by tests/simulator/test_authoring.py). Here, structure by structure (the first
cycle of the main axis meets each once): the service that pages depends on the root (or is it),
the root's own knob is the only one off, and the plausible wrong knob resolves nothing.
"""

import importlib

import pytest

from metasre.simulator import Episode, resolve

FAMILIES = {
    "clock_skew": "meta-sre/clock-skew-v1",
    "feature_flag_rollout": "meta-sre/feature-flag-rollout-v1",
    "tls_cert_expiry": "meta-sre/tls-cert-expiry-v1",
}


def _generator(folder):
    return importlib.import_module(f"tools.families.axes.{folder}")


def _first_cycle(scenario_id):
    entry = resolve(scenario_id)
    n = len(_generator(entry.folder.name).tables())
    return [(seed, entry.instance(seed)) for seed in range(n)]


@pytest.mark.parametrize("folder", sorted(FAMILIES))
def test_every_structure_has_its_own_root_and_knob(folder):
    tables = _generator(folder).tables()
    knobs = [(t["service"], t.get("flag") or t.get("cert") or "clock") for t in tables]
    assert len({t["key"] for t in tables}) == len(tables)
    assert len(set(knobs)) >= 24
    # clock-skew writes each root twice (its clock ahead, then behind); the others once a knob.
    assert all(knobs.count(k) == (2 if folder == "clock_skew" else 1) for k in knobs)


def test_clock_skew_only_the_root_drifts_and_its_observer_calls_it():
    for seed, inst in _first_cycle(FAMILIES["clock_skew"]):
        spec, fault = inst.spec, inst.values["fault"]
        root = spec.ground_truth.service
        # Only the root is beyond the 30 s tolerance; the bystander is seconds off, the rest ms.
        off = {s.name: abs(s.clock_offset_seconds) for s in spec.services}
        assert {s for s, v in off.items() if v > 30} == {root}, seed
        assert spec.service(root).clock_offset_seconds == fault["offset"], seed
        assert 1 < off[fault["bystander"]] < 5, seed
        assert max(v for s, v in off.items() if s not in (root, fault["bystander"])) < 0.01
        # Beyond the 300 s signature window ahead, beyond the 900 s token lifetime behind.
        assert fault["offset"] > 300 or fault["offset"] < -900, seed
        assert root in spec.service(fault["observer"]).depends_on, seed
        assert root != fault["observer"] and fault["bystander"] not in (root, fault["observer"])


def test_clock_skew_syncing_the_service_that_logs_the_errors_resolves_nothing():
    for seed in range(3):
        ep = Episode.make(FAMILIES["clock_skew"], seed)
        observer = ep.instance.values["fault"]["observer"]
        ep.apply("sre", "sync_clock", {"service": observer})
        assert not ep.grade().resolved, seed
        ep.apply("sre", "sync_clock", {"service": ep.instance.spec.ground_truth.service})
        assert ep.grade().fail_to_pass and all(ep.grade().fail_to_pass.values()), seed


def test_feature_flag_the_owner_names_its_flag_and_no_herring():
    for seed, inst in _first_cycle(FAMILIES["feature_flag_rollout"]):
        spec, fault = inst.spec, inst.values["fault"]
        owner = spec.ground_truth.service
        assert spec.ground_truth.location == f"flag:{fault['flag']}"
        assert fault["pager"] == owner or owner in spec.service(fault["pager"]).depends_on, seed
        text = " ".join(line for log in spec.faults[0].logs for line in log.lines)
        assert f"feature flag {fault['flag']}" in text, seed
        assert fault["sibling"] not in text and fault["decoy"] not in text, seed
        flags = {f.name: f for f in spec.flags}
        assert flags[fault["flag"]].service == owner and flags[fault["flag"]].rollout_percent > 0


def test_feature_flag_turning_off_a_herring_flag_resolves_nothing():
    entry = resolve(FAMILIES["feature_flag_rollout"])
    seeds = [s for s in range(12) if entry.instance(s).values["herring"]["sibling"]][:2]
    assert seeds
    for seed in seeds:
        ep = Episode.make(FAMILIES["feature_flag_rollout"], seed)
        fault = ep.instance.values["fault"]
        ep.apply("sre", "set_feature_flag", {"flag": fault["sibling"], "rollout_percent": 0})
        assert not ep.grade().resolved, seed
        ep.apply("sre", "set_feature_flag", {"flag": fault["flag"], "rollout_percent": 0})
        assert all(ep.grade().fail_to_pass.values()), seed


def test_tls_only_the_roots_certificate_is_expired_and_the_pager_depends_on_it():
    for seed, inst in _first_cycle(FAMILIES["tls_cert_expiry"]):
        spec, fault = inst.spec, inst.values["fault"]
        root = spec.ground_truth.service
        expired = [(c.service, c.name) for c in spec.certificates if c.expires_in_minutes < 0]
        legacy = [(root, "legacy-v1-endpoint")] if inst.values["herring"]["legacy"] else []
        assert sorted(expired) == sorted([(root, fault["cert"]), *legacy]), seed
        assert spec.ground_truth.location == f"certificate:{fault['cert']}"
        assert fault["pager"] == root or root in spec.service(fault["pager"]).depends_on, seed
        if fault["peer"]:  # a client certificate: the peer refuses it, at INFO only
            assert fault["peer"] in spec.service(root).depends_on, seed


def test_tls_a_restart_reloads_the_same_expired_certificate():
    for seed in range(3):
        ep = Episode.make(FAMILIES["tls_cert_expiry"], seed)
        root = ep.instance.spec.ground_truth.service
        ep.apply("sre", "restart_service", {"service": root})
        assert not ep.grade().resolved, seed
        cert = ep.instance.values["fault"]["cert"]
        ep.apply("sre", "renew_certificate", {"service": root, "certificate": cert})
        assert all(ep.grade().fail_to_pass.values()), seed
