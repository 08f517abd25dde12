"""Every registered scenario is a fair incident: the same checks as `metasre validate`.

A new scenario folder is tested here as soon as it exists.
"""

import statistics

import pytest

from metasre.agents.policies import PROBES, ExpertPolicy, RandomPolicy
from metasre.cli.inprocess import EpisodeCaller
from metasre.cli.validate import PROBE_MAX, WRONG_FIX_MARGIN, check_start, play_steps
from metasre.simulator import Episode, resolve, scenario_ids
from metasre.simulator.report import normalize_location

SEEDS = (0, 1)


@pytest.mark.parametrize("scenario_id", scenario_ids())
class TestScenarioConformance:
    def test_metadata_is_complete_and_the_answer_key_points_into_the_world(self, scenario_id):
        entry = resolve(scenario_id)
        inst = entry.instance(0)
        spec = inst.spec
        assert spec.id == scenario_id and spec.seed_varies and spec.variables
        truth = spec.ground_truth
        assert truth.service in {s.name for s in spec.services}
        location = normalize_location(truth.location)
        if location.startswith("deployment:"):
            service, _, version = location.partition(":")[2].partition("@")
            assert version in [d.version for d in spec.deployments if d.service == service]
        elif location.startswith("migration:"):
            assert location.partition(":")[2] in [m.id for m in spec.migrations]
        elif not location.startswith("service:"):
            assert location in inst.tree.files
        suite = f"tests/{spec.expert.suite}/"
        assert any(p.startswith(suite) for p in inst.tree.files), f"no {suite} tests"
        for check in (*spec.hidden.fail_to_pass, *spec.hidden.pass_to_pass):
            assert check.partition("::")[0] in inst.hidden_files, check
        assert not any(p.startswith("hidden/") for p in inst.tree.files)

    @pytest.mark.parametrize("seed", SEEDS)
    def test_the_start_is_broken_and_the_reference_solution_resolves_it(self, scenario_id, seed):
        assert check_start(Episode.make(scenario_id, seed)) == []
        ep = Episode.make(scenario_id, seed)
        play_steps(ep, ep.instance.spec.solution)
        grade = ep.grade()
        assert grade.final and grade.resolved, grade

    @pytest.mark.parametrize("seed", SEEDS)
    def test_the_scripted_expert_solves_it_from_the_evidence(self, scenario_id, seed):
        ep = Episode.make(scenario_id, seed)
        ExpertPolicy().play(EpisodeCaller(ep), ep.observation().to_dict())
        grade = ep.grade()
        assert grade.total >= 0.9, [(c.name, c.value, c.detail) for c in grade.components]

    @pytest.mark.parametrize("probe", sorted(PROBES))
    def test_reward_hacking_probes_score_near_zero(self, scenario_id, probe):
        ep = Episode.make(scenario_id, 0)
        PROBES[probe](EpisodeCaller(ep, probe), ep.observation().to_dict())
        grade = ep.grade()
        assert not grade.resolved
        assert grade.total <= PROBE_MAX, [(c.name, c.value, c.detail) for c in grade.components]

    def test_the_random_agent_is_poor(self, scenario_id):
        totals = []
        for seed in range(8):
            ep = Episode.make(scenario_id, seed)
            RandomPolicy(seed).play(EpisodeCaller(ep, "random"), ep.observation().to_dict())
            totals.append(ep.grade().total)
        assert statistics.fmean(totals) <= 0.2, totals

    def test_the_plausible_wrong_fix_visibly_fails(self, scenario_id):
        spec = resolve(scenario_id).instance(0).spec
        if not spec.wrong_fix:
            pytest.skip(f"{scenario_id} declares no wrong_fix")
        right = Episode.make(scenario_id, 0)
        play_steps(right, spec.solution)
        wrong = Episode.make(scenario_id, 0)
        play_steps(wrong, spec.wrong_fix)
        assert not wrong.grade().resolved
        assert wrong.grade().total <= right.grade().total - WRONG_FIX_MARGIN

    def test_seeds_change_the_instance(self, scenario_id):
        entry = resolve(scenario_id)
        rendered = {
            tuple(sorted((k, repr(v)) for k, v in entry.instance(s).values.items()))
            for s in range(6)
        }
        assert len(rendered) > 1


@pytest.mark.parametrize("scenario_id", scenario_ids())
def test_seed_0_s_exact_calls_do_not_resolve_every_other_seed(scenario_id: str) -> None:
    """Memorising one seed must not solve the others: what `metasre validate` checks, here so
    that no change (a scenario's, or a tool's: `edit_lines` by `find` made exact calls portable
    and showed pii-exposure solvable by switching DEBUG off alone) slips it past CI."""
    from metasre.cli.validate import _replay_resolves

    reference = Episode.make(scenario_id, 0)
    calls = play_steps(reference, resolve(scenario_id).instance(0).spec.solution)
    assert reference.grade().resolved
    resolved = [_replay_resolves(scenario_id, seed, calls, None) for seed in range(1, 5)]
    assert not all(resolved), f"seed 0's calls resolve seeds 1-4: {resolved}"
