"""Every registered scenario is a fair incident: the same checks as `metasre validate`.

A new scenario folder is tested here as soon as it exists.
"""

import pytest

from metasre.conformance.validate import ScenarioVerdict, check_shallow, validate_scenario
from metasre.simulator import resolve, scenario_ids
from metasre.simulator.report import normalize_location
from metasre.simulator.scenarios.family import MIN_GROUND_TRUTHS


@pytest.mark.parametrize("scenario_id", scenario_ids())
class TestScenarioConformance:
    def test_metadata_is_complete_and_the_answer_key_points_into_the_world(self, scenario_id):
        """On a spread of seeds: each structure has its own answer key, so each is checked."""
        entry = resolve(scenario_id)
        for seed in range(0, 100, 9):
            self._answer_key_points_into_the_world(entry, seed)

    @staticmethod
    def _answer_key_points_into_the_world(entry, seed):
        inst = entry.instance(seed)
        spec = inst.spec
        assert spec.id == entry.id and spec.seed_varies
        truth = spec.ground_truth
        assert truth.service in {s.name for s in spec.services}
        location = normalize_location(truth.location)
        if location.startswith("deployment:"):
            service, _, version = location.partition(":")[2].partition("@")
            assert version in [d.version for d in spec.deployments if d.service == service]
        elif location.startswith("migration:"):
            assert location.partition(":")[2] in [m.id for m in spec.migrations]
        elif location.startswith("config:"):
            keys = {k.lower() for k in spec.service(truth.service).config}
            assert location.partition(":")[2] in keys, (location, keys)
        elif location.startswith("flag:"):
            assert location.partition(":")[2] in {f.name.lower() for f in spec.flags}
        elif location.startswith("certificate:"):
            names = {c.name.lower() for c in spec.certificates if c.service == truth.service}
            assert location.partition(":")[2] in names, (location, names)
        elif location.startswith("queue:"):
            assert location.partition(":")[2] in {q.name.lower() for q in spec.queues}
        elif not location.startswith("service:"):
            assert location in inst.tree.files
        suite = f"tests/{spec.expert.suite}/"
        assert any(p.startswith(suite) for p in inst.tree.files), f"no {suite} tests"
        for check in (*spec.hidden.fail_to_pass, *spec.hidden.pass_to_pass):
            assert check.partition("::")[0] in inst.hidden_files, check
        assert not any(p.startswith("hidden/") for p in inst.tree.files)

    def test_the_family_validates_over_50_seeds(self, scenario_id):
        """Exactly `metasre validate` on seeds 0-49, but for the shallow policies (below): at
        least 20 distinct ground truths over seeds 0-99; on every seed the start fails
        FAIL_TO_PASS, the reference and the expert pass, the wrong fix and the reward hacks
        stay low; the random agent's mean is at most 0.05; seed 0's exact calls resolve at
        most 5% of the other seeds. A part of a mix is checked on seeds 0-24: results are
        reported on its mix, whose 50 seeds play its structures again among the mix's
        herrings (and the suite's time is CI's budget)."""
        count = 25 if resolve(scenario_id).part_of else 50
        verdict = validate_scenario(scenario_id, range(count), range(20))
        assert verdict.ok, "\n".join(verdict.failures)
        assert verdict.ground_truths >= MIN_GROUND_TRUTHS
        assert verdict.replayed == count - 1 and verdict.replayed_resolved <= 0.05 * (count - 1)

    def test_seeds_change_the_instance(self, scenario_id):
        entry = resolve(scenario_id)
        rendered = {
            tuple(sorted((k, repr(v)) for k, v in entry.instance(s).values.items()))
            for s in range(6)
        }
        assert len(rendered) > 1


SYMPTOM_FIRST = [s for s in scenario_ids() if resolve(s).mix is not None or resolve(s).shallow_held]
"""The mixes, and the families that declare `shallow_held` (split-evidence-v2,
schema-release-v2, twin-faults-v2 and parallel-sla-v2)."""

NOT_YET_HELD: dict[str, str] = {}
"""Symptom-first families the searching checks still beat, by id, with the best of them over
50 test seeds: none since shop-errors-v4 and marketplace-slow-v4 (2026-12-08). Strict: a family
listed here that comes under the bar fails until it is taken off."""


@pytest.mark.parametrize(
    "scenario_id",
    [
        pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=NOT_YET_HELD[s]))
        if s in NOT_YET_HELD
        else s
        for s in SYMPTOM_FIRST
    ],
)
def test_a_symptom_first_family_holds_the_shallow_policies_to_0_2_over_50_test_seeds(scenario_id):
    """The rest of `metasre validate` on such a family: every shallow script and the shallow
    learner average at most 0.2 over 50 test seeds. Apart from the test above, whose verdict
    it would be added to, so that `pytest -n` plays the halves of the suite's dearest family
    (ads-errors: 312 s in one test at a load average of 7) on two workers at once."""
    verdict = ScenarioVerdict(resolve(scenario_id).id, [], symptom_first=True)
    check_shallow(verdict, 50)
    assert verdict.ok, "\n".join(verdict.failures)
    assert len(verdict.shallow_seeds) == 50
    assert len(verdict.shallow_learner) == 50 and verdict.shallow_best is not None
