"""Harmless changes dated and named as culprits are: neither a clock nor a word tells them apart.

The red team's shallow checks read the culprit off the change list by when it landed (at the
onset the page and the alert state) and by what it was called (a subject, a flag, a config key
or an author never used by a herring). Each test here fails on the tree that had the leak.
"""

from __future__ import annotations

import re

import pytest

from metasre.agents.policies.shallow import revert
from metasre.conformance import EpisodeCaller
from metasre.simulator import Episode
from metasre.simulator.scenarios.herrings import LAG
from metasre.simulator.scenarios.loader import load_spec
from metasre.simulator.scenarios.mix import cause_of, mixed_instance
from metasre.simulator.scenarios.registry import resolve

SEEDS = range(24)


def _onset(spec) -> float:
    return max(f.onset_minutes_ago for f in spec.faults)


def _changes(spec):
    for kind in ("deployments", "config_pushes", "flags", "migrations"):
        for c in getattr(spec, kind):
            yield kind, c


@pytest.mark.parametrize(
    "family", ["meta-sre/edge-errors-v3", "meta-sre/courier-errors-v3", "meta-sre/shop-errors-v4"]
)
def test_culprits_land_0_to_lag_minutes_before_the_onset_as_near_herrings_do(family):
    lags, near = set(), 0
    for seed in SEEDS:
        spec = mixed_instance(resolve(family).mix, seed).spec
        onset = _onset(spec)
        truth = spec.ground_truth
        for _, c in _changes(spec):
            gap = c.minutes_ago - onset
            assert not (-0.5 < gap < 0 and c.service == truth.service), "dated after its onset"
            if abs(gap) <= LAG:
                near += 1
            if 0 <= gap <= LAG and c.service == truth.service:
                lags.add(round(gap))
    assert len(lags) >= 3, f"the culprit's lag never varies: {lags}"
    assert near >= 2 * len(SEEDS), "harmless changes land near the onset too"


def test_the_page_dates_the_symptom_not_the_change():
    mix = resolve("meta-sre/courier-errors-v3").mix
    offsets = set()
    for seed in SEEDS:
        inst = mixed_instance(mix, seed)
        said = int(re.search(r"about (\d+) minutes", inst.spec.description).group(1))
        offsets.add(round(_onset(inst.spec)) - said)
    assert offsets <= set(range(4)) and len(offsets) >= 3, offsets


def test_other_teams_commits_carry_culprit_messages_not_a_fixed_list():
    mix = resolve("meta-sre/ads-errors-v3").mix
    fixed = {subject for subject, _, _ in mix.herrings.commits}
    culprits = {m.splitlines()[0] for _, ms in mix.messages for m in ms}
    borrowed = 0
    for seed in SEEDS:
        inst = mixed_instance(mix, seed)
        commits = [c for c in inst.tree.commits if c.minutes_ago > 0]
        if not any(c.message.startswith(("ad_ranking", "capi", "whatsapp")) for c in commits):
            continue
        newest = min(c.minutes_ago for c in commits)
        culprit = next(c for c in commits if c.minutes_ago == newest).message.splitlines()[0]
        for c in commits:
            head = c.message.splitlines()[0]
            assert not any(head.endswith(f": {s}") or f": {s} (" in head for s in fixed), head
            if head in culprits and head != culprit:
                borrowed += 1
    assert borrowed >= len(SEEDS), f"only {borrowed} borrowed messages over {len(SEEDS)} seeds"


def test_harmless_flags_are_named_and_ramped_as_culprit_flags_are():
    mix = resolve("meta-sre/edge-errors-v3").mix
    by_service: dict[str, set[str]] = {}
    for service, fs in (*mix.flags, *mix.test_flags):  # training and test sites' alike
        by_service.setdefault(service, set()).update(name for name, _ in fs)
    rampers = set(mix.herrings.flag_rampers)
    named = suffixed = 0
    for seed in SEEDS:
        spec = mixed_instance(mix, seed).spec
        folder, cause_seed = cause_of(mix, seed)
        own = {f.name for f in load_spec(folder, cause_seed).flags}
        for f in (f for f in spec.flags if f.name not in own):
            assert f.by in rampers, (seed, f.name, f.by)
            if f.service in by_service:  # off the list only where its one culprit flag is up
                named += f.name in by_service[f.service]
                suffixed += f.name not in by_service[f.service]
    # A service borrows only its own split's culprit flags (no name crosses the split), so
    # where its culprit sites all sit in the other split it takes a name from the list.
    assert named >= len(SEEDS) and suffixed <= named / 2, (named, suffixed)


def test_culprit_shaped_pushes_name_a_dependency_of_their_service():
    mix = resolve("meta-sre/courier-errors-v3").mix
    shaped = 0
    for seed in SEEDS:
        spec = mixed_instance(mix, seed).spec
        deps = {s.name: set(s.depends_on) for s in spec.services}
        for p in spec.config_pushes:
            head = p.key.rsplit(".", 1)[0]
            if p.key.endswith((".retries", ".retry_backoff_ms", ".timeout_ms", ".host")):
                shaped += 1
                assert head in deps[p.service], (seed, p.service, p.key)
    assert shaped >= len(SEEDS)


def test_an_episode_of_each_family_still_builds_the_same_world_twice():
    for family in ("meta-sre/edge-errors-v3", "meta-sre/ads-errors-v3"):
        a = Episode.make(family, 5).observation().to_dict()
        b = Episode.make(family, 5).observation().to_dict()
        assert a == b


def _seeds_of(mix, cause: str, wanted: int, limit: int = 400) -> list[int]:
    found = [s for s in range(limit) if cause_of(mix, s)[0].name == cause]
    assert len(found) >= wanted, (cause, found)
    return found[:wanted]


def test_a_full_disks_debug_push_is_not_the_one_debug_push_an_hour_old():
    """courier's disk seeds: the culprit raised log_level to DEBUG 35-60 minutes before its
    onset, and two harmless DEBUG pushes land on sick rows as long before (`leading_pushes`);
    with DEBUG a rare draw from the pool, "undo the DEBUG push" found 13 of 16 test seeds."""
    mix = resolve("meta-sre/courier-errors-v3").mix
    for seed in _seeds_of(mix, "disk_full", 8):
        spec = mixed_instance(mix, seed).spec
        onset = _onset(spec)
        debug = [p for p in spec.config_pushes if p.key == "log_level" and p.value == "DEBUG"]
        truth = spec.ground_truth.service
        assert len(debug) >= 3, (seed, debug)
        leads = sorted(round(p.minutes_ago - onset) for p in debug if p.service != truth)
        assert sum(35 <= lead <= 60 for lead in leads) >= 2, (seed, leads)


def test_the_dashboard_order_of_inner_rows_is_the_seeds_not_the_platforms():
    """With the platform's fixed order, "the first of the rows that tie" was one service."""
    mix = resolve("meta-sre/courier-errors-v3").mix
    firsts = set()
    for seed in SEEDS:
        rows = [r["name"] for r in Episode.make(mix.id, seed).observation().to_dict()["services"]]
        assert rows[0] == "edge-gateway", rows  # the paging edge first, as the platform has it
        firsts.add(rows[1])
    assert len(firsts) >= 5, firsts


def test_a_bad_library_bump_lands_among_harmless_bumps_that_the_grader_keeps():
    """shop's dependency-bump seeds: other packages' vendored libraries are bumped in the same
    hour by the same person, and undoing one of those is damage, not a fix."""
    mix = resolve("meta-sre/shop-errors-v4").mix
    for seed in _seeds_of(mix, "dependency_bump", 6):
        inst = mixed_instance(mix, seed)
        fresh = [c for c in inst.tree.commits if 0 < c.minutes_ago < 1440]
        bumps = [c for c in fresh if ": bump vendored " in c.message.splitlines()[0]]
        truth = inst.spec.ground_truth.location
        culprit = [c for c in bumps if truth in c.changes]
        assert len(culprit) == 1 and len(bumps) >= 3, (seed, [c.message for c in bumps])
        assert len({c.author for c in bumps if "api_gateway" not in c.message}) == 1
        herring = next(c for c in bumps if c is not culprit[0] and "api_gateway" not in c.message)
        ep = Episode.make(mix.id, seed)
        call = EpisodeCaller(ep, "oncall")
        revert(call, herring.sha)  # hunk by hunk, as the shallow revert scripts do
        call(
            "submit_report",
            {
                "root_cause_service": inst.spec.ground_truth.service,
                "root_cause_location": truth,
                "category": "dependency_bump",
                "remediation": "code_fix",
                "summary": "a vendored library bump",
            },
        )
        grade = {c.name: c.value for c in ep.grade().components}
        assert grade["fix"] == 0.0 and grade["no_regressions"] < 0.1, (seed, grade)


def test_the_harmless_bumps_are_the_culprits_round():
    """shop-errors-v3 spread its harmless bumps over the hour under their packages' own ticket
    prefixes, on libraries no culprit bumps: the bump nearest the onset, a PLAT ticket and
    the library's name each told the bad one (the linear learner undid it on 7 of 9 test
    seeds). Now they land minutes from it, under its prefix, some on either side of it."""
    mix = resolve("meta-sre/shop-errors-v4").mix
    sides = set()
    for seed in _seeds_of(mix, "dependency_bump", 8):
        inst = mixed_instance(mix, seed)
        truth = inst.spec.ground_truth.location
        bumps = [
            c
            for c in inst.tree.commits
            if 0 < c.minutes_ago < 1440
            and ": bump vendored " in c.message.splitlines()[0]
            and "api_gateway" not in c.message
        ]
        (culprit,) = [c for c in bumps if truth in c.changes]
        prefix = culprit.message.splitlines()[0].rsplit("(", 1)[1].split("-")[0]
        herrings = [c for c in bumps if c is not culprit]
        assert len(herrings) >= 2, (seed, [c.message for c in bumps])
        for c in herrings:
            assert abs(c.minutes_ago - culprit.minutes_ago) <= 8.0, (seed, c.minutes_ago)
            assert f"({prefix}-" in c.message.splitlines()[0], (seed, c.message)
            assert "Renovate flagged" in c.message  # a body like the culprit's
            sides.add(c.minutes_ago < culprit.minutes_ago)
    assert sides == {True, False}


def test_no_harmless_migration_of_slow_query_crosses_the_split():
    """A name seen harmless on training seeds told the bad one apart on test seeds (the one
    name of a test batch training never showed): no innocent of a test batch rides in a
    training batch, and each rides in one test batch only; every batch holds six."""
    from metasre.simulator.scenarios.loader import read_toml, split_axis
    from metasre.simulator.scenarios.registry import resolve as _resolve

    folder = _resolve("meta-sre/slow-query-v4").folder
    faults = read_toml(folder / "scenario.toml")["variants"]["fault"]
    _, _, test = split_axis(folder)
    slug = lambda m: m.split("_", 1)[1]  # noqa: E731
    tested = [slug(m) for i, t in enumerate(faults) if i in test for m in t["innocent"]]
    trained = {slug(m) for i, t in enumerate(faults) if i not in test for m in t["innocent"]}
    assert len(tested) == len(set(tested)) == 5 * len(test)
    assert not set(tested) & trained
    assert all(len(t["innocent"]) == 5 for t in faults)


def test_whether_whatsapp_runs_its_own_database_does_not_name_the_bad_migration():
    """migration-cascade: wa_postgres existed only when the bad migration lived on it."""
    from metasre.simulator.scenarios.loader import read_toml
    from metasre.simulator.scenarios.registry import resolve as _resolve

    folder = _resolve("meta-sre/migration-cascade-v3").folder
    faults = read_toml(folder / "scenario.toml")["variants"]["fault"]
    by_batch: dict[tuple[str, ...], set[bool]] = {}
    bad_on_shared = 0
    for t in faults:
        by_batch.setdefault((t["m5"], t["m6"], t["m7"]), set()).add(bool(t["split"]))
        bad_on_shared += t["split"] and t["db"] == "postgres"
    assert all(len(v) == 1 for v in by_batch.values()), by_batch
    assert bad_on_shared >= 3


def test_no_flag_name_crosses_edge_errors_split():
    """A test site's culprit flag is a name no training seed shows: harmless flags of test
    seeds are named from the test sites' culprits and a quarter of the family's list, so the
    culprit is not the one name of a test seed that training never showed."""
    from metasre.simulator.scenarios.splits import split_seeds

    entry = resolve("meta-sre/edge-errors-v3")
    mix = entry.mix

    def added(seed: int) -> set[str]:
        folder, cause_seed = cause_of(mix, seed)
        own = {f.name for f in load_spec(folder, cause_seed).flags}
        return {f.name for f in mixed_instance(mix, seed).spec.flags} - own

    named = {
        split: set().union(*(added(seed) for seed in split_seeds(entry, split, 40)))
        for split in ("train", "test")
    }
    assert named["test"] and named["train"]
    assert not named["test"] & named["train"], sorted(named["test"] & named["train"])
