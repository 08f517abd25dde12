"""Rewards teach incident response, not exploits (issue 14, findings 1, 2, 3 and 7).

- Nothing paid before the episode ends depends on what an agent cannot observe: looking at
  the root service or file pays exactly what looking elsewhere pays, and an operation costs
  the same whether or not it is the remedy.
- Operations the incident did not need cost the grade, with no cap: shotguns <= 0.3.
- Hints are priced by what they reveal: every hint, then the reference solution, <= 0.5.
- Skipping the investigation never outscores investigating.
"""

from __future__ import annotations

import pytest

from metasre.agents.policies import HINTED, SHOTGUNS, ExpertPolicy
from metasre.cli.inprocess import EpisodeCaller
from metasre.simulator import Episode, scenario_ids
from metasre.simulator.report import normalize_location
from metasre.simulator.rewards import HINT_PRICES, UNNEEDED_OPERATION

SCENARIOS = sorted(scenario_ids())
OPERATIONS = ("rollback_deployment", "restart_service", "scale_service")


def _args(tool: str, service: str) -> dict[str, object]:
    return {"service": service, "replicas": 3} if tool == "scale_service" else {"service": service}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_no_reward_before_the_end_depends_on_the_ground_truth(scenario: str) -> None:
    truth = Episode.make(scenario, 0).instance.spec.ground_truth
    paid: dict[tuple[str, str], dict[str, float]] = {}
    services = sorted(Episode.make(scenario, 0).world.services)
    for service in services:
        for tool, args in (
            ("read_logs", {"service": service}),
            ("query_metrics", {"service": service, "metric": "error_rate"}),
            ("describe_service", {"service": service}),
        ):
            ep = Episode.make(scenario, 0)
            paid[(tool, service)] = dict(ep.apply("a", tool, args).reward.components)
    for (tool, _service), components in paid.items():
        assert components == paid[(tool, services[0])], (tool, components)
    # a file: the root-cause file and any other pay the same
    ep = Episode.make(scenario, 0)
    files = [p for p in ep.workspace.walk() if p.endswith(".py") and not p.startswith("tests/")]
    root = normalize_location(truth.location)
    looks = {
        path: dict(
            Episode.make(scenario, 0).apply("a", "view_file", {"path": path}).reward.components
        )
        for path in ({root} & set(files)) | set(files[:3])
    }
    assert len({tuple(sorted(c.items())) for c in looks.values()}) == 1, looks


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_an_operation_pays_the_same_at_once_whether_or_not_it_is_the_remedy(scenario: str) -> None:
    services = sorted(Episode.make(scenario, 0).world.services)
    for tool in OPERATIONS:
        paid = set()
        for service in services:
            ep = Episode.make(scenario, 0)
            step = ep.apply("a", tool, _args(tool, service))
            if step.ok:
                components = dict(step.reward.components)
                components.pop("fault_cured", None)  # the world shows a cure to everyone
                paid.add(tuple(sorted(components.items())))
        assert len(paid) <= 1, (tool, paid)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_unneeded_operation_costs_the_grade_without_a_cap(scenario: str) -> None:
    ep = Episode.make(scenario, 0)
    truth = ep.instance.spec.ground_truth
    innocent = next(s for s in sorted(ep.world.services) if s != truth.service)
    for _ in range(5):
        ep.apply("a", "restart_service", {"service": innocent})
    cost = ep.grade().component("unneeded_operations").value
    assert cost == pytest.approx(5 * UNNEEDED_OPERATION)


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("name", sorted(SHOTGUNS))
def test_shotguns_grade_at_most_0_3(scenario: str, name: str) -> None:
    ep = Episode.make(scenario, 2)
    SHOTGUNS[name](EpisodeCaller(ep, "shotgun"), ep.observation().to_dict())
    assert ep.grade().total <= 0.3, ep.grade().components


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_hint_then_the_reference_solution_grades_at_most_0_5(scenario: str) -> None:
    ep = Episode.make(scenario, 1)
    for _ in range(3):
        ep.apply("a", "ask_hint", {})
    ep.play_steps(ep.instance.spec.solution)
    grade = ep.grade()
    assert grade.resolved  # the hints bought the answer, and it still costs
    assert grade.component("hints").value == pytest.approx(-sum(HINT_PRICES))
    assert grade.total <= 0.5
    other = Episode.make(scenario, 1)
    HINTED["ask_every_hint"](EpisodeCaller(other, "hinted"), other.observation().to_dict())
    assert other.grade().total <= 0.5


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_skipping_the_investigation_never_outscores_investigating(scenario: str) -> None:
    guess = Episode.make(scenario, 3)
    guess.play_steps(guess.instance.spec.solution)  # the right answer, straight away
    expert = Episode.make(scenario, 3)
    ExpertPolicy().play(EpisodeCaller(expert), expert.observation().to_dict())
    assert expert.grade().resolved
    assert guess.grade().total <= expert.grade().total + 1e-9
