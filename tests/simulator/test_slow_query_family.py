"""meta-sre/slow-query-v3: the seed chooses the database, the hot query and index, how a
migration lost the index, and which migration of the batch did it."""

from __future__ import annotations

import pytest

from metasre.simulator import Episode
from metasre.simulator.scenarios.registry import resolve

FAMILY = "meta-sre/slow-query-v3"
STRUCTURES = range(31)
"""Seeds 0-24 meet each of the 25 structures once (one stratified cycle)."""


def _batch(spec):
    """The six migrations the migrate job applied together, oldest id first."""
    return [m for m in spec.migrations if m.minutes_ago < 1000]


def test_database_index_mechanism_and_position_all_vary():
    entry = resolve(FAMILY)
    owners, indexes, mechanisms, positions = set(), set(), set(), set()
    for seed in STRUCTURES:
        spec = entry.spec(seed)
        fault = entry.instance(seed).values["fault"]
        bad = spec.ground_truth.location.partition(":")[2]
        batch = [m.id for m in _batch(spec)]
        assert bad in batch and len(batch) == 6
        assert all(m.service == spec.ground_truth.service for m in _batch(spec))
        positions.add(batch.index(bad))
        owners.add(spec.ground_truth.service)
        indexes.add(fault["index"])
        mechanisms.add(fault["key"].rsplit("-", 1)[1])
    assert positions == {0, 1, 2, 3, 4, 5}
    assert owners == {"catalog-db", "orders-db"}
    assert len(indexes) == 10
    assert mechanisms == {"drop", "reversed", "narrowed", "plain", "invalid"}


@pytest.mark.parametrize("seed", [0, 4, 13])
def test_rolling_back_an_innocent_migration_resolves_nothing(seed):
    spec = resolve(FAMILY).spec(seed)
    bad = spec.ground_truth.location.partition(":")[2]
    for innocent in (m for m in _batch(spec) if m.id != bad):
        ep = Episode.make(FAMILY, seed)
        out = ep.apply(
            "a", "rollback_migration", {"service": innocent.service, "migration": innocent.id}
        )
        assert out.output.ok
        assert not ep.grade().resolved


@pytest.mark.parametrize("seed", STRUCTURES)
def test_the_database_log_names_the_bad_migration_and_the_tree_holds_the_batch(seed):
    ep = Episode.make(FAMILY, seed)
    spec = ep.instance.spec
    db = spec.ground_truth.service
    bad = spec.ground_truth.location.partition(":")[2]
    logs = ep.apply("a", "read_logs", {"service": db, "level": "WARN"}).output
    lines = [entry["text"] for entry in logs.data["lines"]]
    assert any(bad in line and "Seq Scan" in line for line in lines)
    assert not any(m.id in line for m in _batch(spec) if m.id != bad for line in lines)
    for m in _batch(spec):
        assert m.file in ep.instance.tree.files
    assert "DROP INDEX" in ep.instance.tree.files[next(m.file for m in _batch(spec) if m.id == bad)]
