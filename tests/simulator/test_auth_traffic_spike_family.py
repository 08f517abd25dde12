"""meta-sre/auth-traffic-spike-v2: the seed chooses which service saturates, where the load
comes from and how much, so the replicas the remedy needs vary."""

from __future__ import annotations

from collections import defaultdict

from metasre.agents.policies.evidence import categorise
from metasre.simulator import Episode
from metasre.simulator.scenarios.registry import resolve

FAMILY = "meta-sre/auth-traffic-spike-v2"


def _required(spec):
    return int(spec.faults[0].params["required_replicas"])


def test_many_services_saturate_and_each_needs_its_own_counts():
    entry = resolve(FAMILY)
    by_service = defaultdict(set)
    for seed in range(63):  # one stratified cycle: every structure once
        spec = entry.spec(seed)
        assert spec.ground_truth.location == f"service:{spec.ground_truth.service}"
        by_service[spec.ground_truth.service].add(_required(spec))
    assert len(by_service) == 21 and "auth-service" in by_service
    # A service's three sources need three different replica counts.
    assert all(len(counts) == 3 for counts in by_service.values())


def test_one_replica_short_of_the_need_does_not_resolve():
    for seed in (0, 5, 17):
        spec = resolve(FAMILY).spec(seed)
        service, need = spec.ground_truth.service, _required(spec)
        short = Episode.make(FAMILY, seed)
        short.apply("a", "scale_service", {"service": service, "replicas": need - 1})
        assert not short.grade().resolved
        enough = Episode.make(FAMILY, seed)
        enough.apply("a", "scale_service", {"service": service, "replicas": need})
        assert enough.grade().resolved


def test_the_saturated_service_s_own_lines_read_as_its_category():
    """No source's wording trips another category's cue (a 'sequential scan' reads as a slow
    query): the lines show a saturated service, or workers lagging behind their queue."""
    entry = resolve(FAMILY)
    for seed in range(63):
        spec = entry.spec(seed)
        root = spec.ground_truth.service
        lines = [
            ln for f in spec.faults for log in f.logs if log.service == root for ln in log.lines
        ]
        assert categorise(lines)[0] == spec.ground_truth.category, (seed, lines)
        assert spec.ground_truth.category in ("capacity", "consumer_lag")
