"""meta-sre/slow-query-v4: the seed chooses the database, the hot query and index, how a
migration lost the index, and which migration of the batch did it."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from metasre.simulator import Episode
from metasre.simulator.scenarios.registry import resolve

FAMILY = "meta-sre/slow-query-v4"
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


VERBS = ("drop_unused_", "narrow_", "simplify_", "reindex_")
"""How a bad migration's name says what it did to its index (`bad_migration`)."""


def _tables():
    """Each table of the family's fault axis, with the SQL of its batch by migration name."""
    from metasre.simulator.scenarios.loader import read_toml

    folder = resolve(FAMILY).folder
    faults = read_toml(folder / "scenario.toml")["variants"]["fault"]
    for t in faults:
        (batch,) = (folder / "history").glob(f"*-batch-{t['key']}")
        t["sql"] = {
            t[f"m{i}"]: (batch / t[f"f{i}"]).read_text(encoding="utf-8") for i in range(1, 7)
        }
    return faults


def _slug(migration: str) -> str:
    return migration.split("_", 1)[1]


def test_harmless_batch_mates_name_the_hot_indexes_with_the_bad_ones_verbs():
    """v3: a hot index's words and the verbs other than a plain rebuild rode almost only on bad
    migrations, and no harmless one named the index its batch broke (learner 0.240; a script
    knowing the ten hot indexes 0.32). Each word's share among the harmless is at least half
    its share among the bad, and harmless twins name the broken index on most tables."""
    tables = _tables()
    names = {t["index"]: {t["index"]} for t in tables}
    for t in tables:
        if t["key"].endswith("-reversed"):
            names[t["index"]].add(_slug(t["bad"]))

    def words(slug: str) -> set[str]:
        hot = {index for index, spelt in names.items() if any(n in slug for n in spelt)}
        return hot | {v for v in VERBS if slug.startswith(v)}

    bad = Counter(w for t in tables for w in words(_slug(t["bad"])))
    good = Counter(w for t in tables for m in t["innocent"] for w in words(_slug(m)))
    n_bad, n_good = len(tables), sum(len(t["innocent"]) for t in tables)
    assert len(bad) == 14
    thin = {
        w: (good[w] / n_good, k / n_bad) for w, k in bad.items() if good[w] / n_good < k / n_bad / 2
    }
    assert not thin, thin
    paged = [t for t in tables if any(t["index"] in words(_slug(m)) for m in t["innocent"])]
    assert len(paged) >= len(tables) * 3 // 4

    # Nor is the bad one the first or the last of those naming the broken index.
    for pick in (0, -1):
        met = sum(
            [m for m in (t[f"m{i}"] for i in range(1, 7)) if t["index"] in words(_slug(m))][pick]
            == t["bad"]
            for t in tables
        )
        assert met <= len(tables) / 2, (pick, met)


def test_no_harmless_twin_after_the_bad_migration_rebuilds_the_index_it_broke():
    """A rebuild of the broken index after the bad migration would mend it (or fail on an index
    that is gone): one that rides after it works on the archived table's copy."""
    for t in _tables():
        order = [t[f"m{i}"] for i in range(1, 7)]
        for m in order[order.index(t["bad"]) + 1 :]:
            for line in t["sql"][m].splitlines():
                if line.startswith("--"):
                    continue
                if re.search(rf"(?<![\w.]){t['index']}(?!\w)", line):
                    assert "archive." in line, (t["key"], m, line)
