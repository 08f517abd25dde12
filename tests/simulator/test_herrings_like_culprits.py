"""Harmless changes dated and named as culprits are: neither a clock nor a word tells them apart.

The red team's shallow checks read the culprit off the change list by when it landed (at the
onset the page and the alert state) and by what it was called (a subject, a flag, a config key
or an author never used by a herring). Each test here fails on the tree that had the leak.
"""

from __future__ import annotations

import re

import pytest

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
    "family", ["meta-sre/edge-errors-v2", "meta-sre/courier-errors-v2", "meta-sre/shop-errors-v2"]
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
    mix = resolve("meta-sre/courier-errors-v2").mix
    offsets = set()
    for seed in SEEDS:
        inst = mixed_instance(mix, seed)
        said = int(re.search(r"about (\d+) minutes", inst.spec.description).group(1))
        offsets.add(round(_onset(inst.spec)) - said)
    assert offsets <= set(range(4)) and len(offsets) >= 3, offsets


def test_other_teams_commits_carry_culprit_messages_not_a_fixed_list():
    mix = resolve("meta-sre/ads-errors-v2").mix
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
    mix = resolve("meta-sre/edge-errors-v2").mix
    by_service = {service: {name for name, _ in fs} for service, fs in mix.flags}
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
    assert named >= len(SEEDS) and suffixed <= named / 4, (named, suffixed)


def test_culprit_shaped_pushes_name_a_dependency_of_their_service():
    mix = resolve("meta-sre/courier-errors-v2").mix
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
    for family in ("meta-sre/edge-errors-v2", "meta-sre/ads-errors-v2"):
        a = Episode.make(family, 5).observation().to_dict()
        b = Episode.make(family, 5).observation().to_dict()
        assert a == b
