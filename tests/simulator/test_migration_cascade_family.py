"""meta-sre/migration-cascade-v3: the seed chooses the batch, the bad migration's position and
mechanism, the database that owns it and the services that feel it."""

from __future__ import annotations

import pytest

from metasre.agents.policies.evidence import MIGRATION_ID, categorise
from metasre.simulator import Episode
from metasre.simulator.scenarios.registry import resolve

FAMILY = "meta-sre/migration-cascade-v3"
STRUCTURES = range(27)
"""Seeds 0-26 meet each of the 27 bad migrations once (one stratified cycle)."""


def _recent(spec):
    """The three migrations the migrate job applied together, oldest first."""
    return [m for m in spec.migrations if m.minutes_ago < 1000]


def test_the_bad_migration_is_first_middle_or_newest_and_owned_by_either_database():
    entry = resolve(FAMILY)
    positions, owners, symptoms = set(), set(), set()
    for seed in STRUCTURES:
        spec = entry.spec(seed)
        bad = spec.ground_truth.location.partition(":")[2]
        recent = [m.id for m in _recent(spec)]
        assert bad in recent and len(recent) == 3
        positions.add(recent.index(bad))
        owners.add(spec.ground_truth.service)
        symptoms.add(tuple(spec.ground_truth.symptom_services))
    assert positions == {0, 1, 2}
    assert owners == {"postgres", "wa_postgres"}
    assert len(symptoms) >= 4  # each app alone, capi with ad_ranking downstream, all three


@pytest.mark.parametrize("seed", [1, 6, 11])
def test_rolling_back_an_innocent_migration_of_the_batch_resolves_nothing(seed):
    spec = resolve(FAMILY).spec(seed)
    bad = spec.ground_truth.location.partition(":")[2]
    for innocent in (m for m in _recent(spec) if m.id != bad):
        ep = Episode.make(FAMILY, seed)
        out = ep.apply(
            "a", "rollback_migration", {"service": innocent.service, "migration": innocent.id}
        )
        assert out.output.ok
        assert not ep.grade().resolved


def test_the_owner_of_a_split_structure_lists_the_bad_migration():
    entry = resolve(FAMILY)
    seed = next(s for s in STRUCTURES if entry.spec(s).ground_truth.service == "wa_postgres")
    ep = Episode.make(FAMILY, seed)
    bad = ep.instance.spec.ground_truth.location.partition(":")[2]
    info = ep.apply("a", "describe_service", {"service": "wa_postgres"}).output.data
    assert bad in [m["id"] for m in info["migrations"]]
    deps = ep.apply("a", "check_dependencies", {}).output.data["services"]
    assert {r["service"]: r["depends_on"] for r in deps}["whatsapp_sync"] == ["wa_postgres"]


def test_the_database_s_own_lines_read_as_the_ground_truth_s_category():
    """Rejected writes read as a bad migration, statements past the timeout as a slow query, and
    the lines name the bad migration (so a reader can tell it from the innocent ones)."""
    entry = resolve(FAMILY)
    for seed in STRUCTURES:
        spec = entry.spec(seed)
        truth = spec.ground_truth
        lines = [
            ln
            for f in spec.faults
            for log in f.logs
            if log.service == truth.service
            for ln in log.lines
        ]
        assert categorise(lines)[0] == truth.category, (seed, lines)
        named = {m for ln in lines for m in MIGRATION_ID.findall(ln)}
        assert named == {truth.location.partition(":")[2]}, (seed, named)
