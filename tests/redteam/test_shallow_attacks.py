"""Red team of issue 25: policies that act without investigating stay at or below 0.2.

Each attack is a class validate now searches (agents/policies/shallow.py), played here apart
from validate's whole sweep so that a family's failure names the attack:

- the change at the onset: the page says when the symptom started; a cause's change timed at
  that minute among herrings drawn around it is named by its time alone (the learner's onset
  buckets, the scripts' `at-onset` target, `revert@nearest-onset`);
- conjunctions: the learner with boosted stumps in place of its linear model;
- the unfamiliar commit: harmless commits drawn from a fixed list of subjects leave the culprit
  the newest subject not on it (`revert@newest-unfamiliar`, the learner's subject words);
- shotguns: every remedy the family uses on every sick service or change at once;
- retries: the boosted learner's best candidates in turn, stopping when the step reward says a
  fault was cured (what the wire tells an RL policy after every call).

On seeds of the test split, fitted on validate's training seeds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from metasre.agents.policies.shallow import (
    REVERT,
    STUMPS_LEARNER,
    Candidate,
    Retrying,
    ShallowLearner,
    candidates,
    glance,
    operate,
    report,
    scripts,
)
from metasre.conformance import EpisodeCaller

from .shallow_play import SHALLOW_MAX, SYMPTOM_FIRST, stumps_learner, sweep, training

pytestmark = pytest.mark.xdist_group("redteam-shallow")

NEW_RULES = ("at-onset", "nearest-onset", "newest-unfamiliar")


def _attacks(scenario_id: str) -> dict[str, Any]:
    examples = training(scenario_id)
    found: dict[str, Any] = {
        s.name: s.play for s in scripts(examples) if s.name.endswith(NEW_RULES)
    }
    found["learner"] = ShallowLearner().fit(examples).play
    found[STUMPS_LEARNER] = stumps_learner(scenario_id).play
    return found


@pytest.mark.parametrize("scenario_id", SYMPTOM_FIRST)
def test_the_change_at_the_onset_and_the_unfamiliar_commit_do_not_solve_a_family(scenario_id):
    """Found on 2026-12-07 (50 test seeds): courier rollback_config@at-onset 0.565,
    edge set_feature_flag@at-onset 0.340, shop rollback_deployment@at-onset 0.340, ads
    revert@newest-unfamiliar 0.722 and the learner 0.800, marketplace the learner 0.412."""
    means = sweep(scenario_id, _attacks(scenario_id))
    over = {name: m for name, m in means.items() if m > SHALLOW_MAX}
    assert not over, f"acting on the opening beats {SHALLOW_MAX}: {over}"


def _shotgun(scenario_id: str):
    """Every remedy the training references use, on every sick service and recent change."""
    remedies = {key[0] for ex in training(scenario_id) for key in ex.reference}

    def play(caller: EpisodeCaller, observation: Mapping[str, Any]) -> None:
        opening = glance(caller, observation)
        cands = candidates(opening)
        sick = {str(r["name"]) for r in opening.rows if r.get("health") != "healthy"}
        taken: list[Candidate] = []
        for c in cands:
            if c.tool not in remedies or c.key in {t.key for t in taken}:
                continue
            recent = c.event is not None or (c.tool == REVERT and c.features.get("commit_rank"))
            if c.service in sick or recent:
                taken.append(c)
        for c in taken:
            operate(caller, c)
        if taken:
            lead = taken[0]
            report(caller, lead.service, lead.location, "code_bug", lead.tool)

    return play


@pytest.mark.parametrize("scenario_id", SYMPTOM_FIRST)
def test_shotguns_and_retries_do_not_solve_a_family(scenario_id):
    """Each unneeded operation costs 0.35 of the grade: a shotgun or three tries must not pay."""
    retrying = Retrying(stumps_learner(scenario_id))
    means = sweep(scenario_id, {"shotgun": _shotgun(scenario_id), "retries": retrying.play})
    over = {name: m for name, m in means.items() if m > SHALLOW_MAX}
    assert not over, f"acting on the opening beats {SHALLOW_MAX}: {over}"


def test_the_learner_sees_a_change_at_the_page_s_onset():
    """The search covers the class, not one world: wherever a change's minute is the onset the
    page states, the candidate undoing it carries the onset features (and no other does)."""
    seen = 0
    for ex in training("meta-sre/courier-errors-v1"):
        onset = ex.opening.onset
        assert onset is not None
        for c in candidates(ex.opening):
            if c.event is None:
                continue
            at = abs(-float(ex.opening.events[c.event]["minute"]) - onset) <= 0.5
            assert bool(c.features.get("onset_exact")) == at, (c.key, onset)
            if at:
                assert c.features.get("onset_nearest") and c.features.get("changed_at_onset")
                seen += 1
    assert seen >= 10


def test_harmless_subjects_from_a_fixed_list_are_learned_as_familiar():
    """Every subject ads-errors draws its harmless commits from is familiar after training, and
    no culprit's subject is: `revert@newest-unfamiliar` skips exactly the herrings."""
    from metasre.agents.policies.shallow import familiar_subjects, subject
    from metasre.simulator import resolve

    examples = training("meta-sre/ads-errors-v1")
    familiar = familiar_subjects(examples)
    listed = {s for s, _, _ in resolve("meta-sre/ads-errors-v1").mix.herrings.commits}
    assert {s.lower() for s in listed} <= familiar
    culprits = {
        subject(c)
        for ex in examples
        for c in ex.opening.commits
        if any(k[0] == REVERT and k[2] == c.get("sha") for k in ex.reference)
    }
    assert culprits and not culprits & familiar
