"""Red team of issue 25: policies that act without investigating stay at or below 0.2.

Each attack is a class validate now searches (agents/policies/shallow.py); validate's
conformance sweep holds the onset, unfamiliar-commit and stumps attacks to the bar on every
symptom-first family (tests/simulator/test_scenario_conformance.py), and this file keeps what
validate does not play (a shotgun of every remedy on every sick row and change) and how the
search covers the class:

- the change at the onset: the page says when the symptom started; a cause's change timed at
  that minute among herrings drawn around it is named by its time alone (the learner's onset
  buckets, the scripts' `at-onset` target, `revert@nearest-onset`);
- conjunctions: the learner with boosted stumps in place of its linear model;
- the unfamiliar commit: harmless commits drawn from a fixed list of subjects leave the culprit
  the newest subject not on it (`revert@newest-unfamiliar`, the learner's subject words);
- shotguns: every remedy the family uses on every sick service or change at once;
- retries (guess and check): the boosted learner's best candidates in turn, stopping when the
  step reward says a fault was cured. Validate shows its mean (`guess_and_check`) but does not
  hold it to the bar: it reads what its operations did, and its answer is the price of a wrong
  operation (0.28-0.6 on the v2 families: an open finding of issue 25).

On seeds of the test split, fitted on validate's training seeds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from metasre.agents.policies.shallow import (
    REVERT,
    Candidate,
    candidates,
    glance,
    operate,
    report,
)
from metasre.conformance import EpisodeCaller

from .shallow_play import SHALLOW_MAX, SYMPTOM_FIRST, sweep, training

pytestmark = pytest.mark.xdist_group("redteam-shallow")


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
def test_shotguns_do_not_solve_a_family(scenario_id):
    """Each unneeded operation costs 0.35 of the grade: a shotgun must not pay."""
    means = sweep(scenario_id, {"shotgun": _shotgun(scenario_id)})
    over = {name: m for name, m in means.items() if m > SHALLOW_MAX}
    assert not over, f"acting on the opening beats {SHALLOW_MAX}: {over}"


def test_the_learner_sees_a_change_at_the_page_s_onset():
    """The search covers the class, not one world: wherever a change's minute is the onset the
    page states, the candidate undoing it carries the onset features (and no other does)."""
    seen = 0
    for ex in training("meta-sre/courier-errors-v3"):
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
