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
from hypothesis import given, settings
from hypothesis import strategies as st

from metasre.agents.policies import HINTED, SHOTGUNS, ExpertPolicy
from metasre.conformance import EpisodeCaller
from metasre.simulator import Episode, resolve, scenario_ids
from metasre.simulator.report import normalize_location
from metasre.simulator.rewards import FAULT_CURED, HINT_PRICES, UNNEEDED_OPERATION
from metasre.simulator.tools import served_tools

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
    SHOTGUNS[name](EpisodeCaller(ep, "shotgun"), ep.observation().to_dict(), served_tools())
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
    HINTED["ask_every_hint"](
        EpisodeCaller(other, "hinted"), other.observation().to_dict(), served_tools()
    )
    assert other.grade().total <= 0.5


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_skipping_the_investigation_never_outscores_investigating(scenario: str) -> None:
    guess = Episode.make(scenario, 3)
    guess.play_steps(guess.instance.spec.solution)  # the right answer, straight away
    expert = Episode.make(scenario, 3)
    ExpertPolicy().play(EpisodeCaller(expert), expert.observation().to_dict())
    assert expert.grade().resolved
    # The SLA pays for time, and a guess acted on at once is faster than any investigation: on
    # a family whose SLA a solo responder misses by design (parallel-sla) it would always win
    # that part. The rest of the grade must never pay for skipping the investigation.
    guessed, investigated = guess.grade(), expert.grade()
    # Totals are rounded to 6 places (grader.grade), the components not: a tie may differ by
    # half a millionth.
    assert guessed.total - guessed.component("sla").value <= (
        investigated.total - investigated.component("sla").value + 1e-6
    )


# -- shaping is potential-based, and no seat gains from a cycle (findings 4 and the design) --

_FAULT_PARTS = ("fault_cured", "fault_returned", "fault_repaired", "fault_relapsed")
OOM = "meta-sre/user-service-oom-v2"


def _fault_shaping(step: object) -> dict[str, float]:
    """What each agent earned from faults on one call (its own and others' credits)."""
    reward = step.reward  # type: ignore[attr-defined]
    out = {reward.agent_id: sum(reward.components.get(k, 0.0) for k in _FAULT_PARTS)}
    for agent, components in reward.others.items():
        out[agent] = out.get(agent, 0.0) + sum(components.get(k, 0.0) for k in _FAULT_PARTS)
    return out


def _cured(ep: Episode) -> int:
    return sum(1 for f in ep.faults if f.cured_at() is not None)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from(["scale_up", "scale_down", "restart", "wait", "scale_more"]),
        ),
        max_size=24,
    )
)
def test_fault_shaping_is_a_potential_and_cannot_be_farmed(calls: list[tuple[str, str]]) -> None:
    ep = Episode.make(OOM, 0)
    need = next(c.replicas for c in ep.instance.spec.hidden.state_checks if c.replicas)
    totals: dict[str, float] = {}
    for agent, action in calls:
        if ep.phase.value != "running":
            break
        tool, args = {
            "scale_up": ("scale_service", {"service": "user-service", "replicas": need}),
            "scale_more": ("scale_service", {"service": "user-service", "replicas": need + 1}),
            "scale_down": ("scale_service", {"service": "user-service", "replicas": 1}),
            "restart": ("restart_service", {"service": "user-service"}),
            "wait": ("read_logs", {"service": "user-service"}),
        }[action]
        for who, value in _fault_shaping(ep.apply(agent, tool, args)).items():
            totals[who] = totals.get(who, 0.0) + value
    faults = len(ep.faults)
    # the team is paid exactly the potential's change: a cycle of states pays zero
    assert sum(totals.values()) == pytest.approx(0.2 * _cured(ep))
    # and no seat can pump it: each holds at most one cure's worth per fault, whatever it does
    for value in totals.values():
        assert -0.2 * faults - 1e-9 <= value <= 0.2 * faults + 1e-9


def test_breaking_and_fixing_over_and_over_earns_neither_seat_anything() -> None:
    # A seed of the OOM family whose remedy is scaling (its faults, one or two, all cured by
    # enough replicas of the root).
    seed = next(
        s for s in range(100) if resolve(OOM).spec(s).ground_truth.remediation == "scale_service"
    )
    spec = resolve(OOM).spec(seed)
    root = spec.ground_truth.service
    cured = FAULT_CURED * len(spec.faults)

    def play(cycles: int) -> dict[str, float]:
        ep = Episode.make(OOM, seed)
        need = next(c.replicas for c in ep.instance.spec.hidden.state_checks if c.replicas)
        totals: dict[str, float] = {"fixer": 0.0, "breaker": 0.0}
        up = {"service": root, "replicas": need}
        down = {"service": root, "replicas": 1}
        for step in [("fixer", up)] + [("breaker", down), ("fixer", up)] * cycles:
            for who, value in _fault_shaping(ep.apply(step[0], "scale_service", step[1])).items():
                totals[who] += value
        return totals

    once = play(0)
    assert once == {"fixer": pytest.approx(cured), "breaker": 0.0}
    for cycles in (1, 3, 6):
        assert play(cycles) == {"fixer": pytest.approx(cured), "breaker": pytest.approx(0.0)}


@pytest.mark.parametrize(("tool", "minutes"), [("restart_service", 1), ("rollback_deployment", 2)])
def test_an_operation_costs_in_the_world_too(tool: str, minutes: int) -> None:
    """Restarting or rolling back a healthy service is an outage window of its own."""
    ep = Episode.make("meta-sre/payment-bad-deploy-v2", 0)
    healthy = "inventory-service"
    before = ep.telemetry.value(healthy, "error_rate", ep.minute)
    at = ep.clock
    step = ep.apply("a", tool, {"service": healthy})
    if not step.ok:
        pytest.skip(f"{healthy} cannot {tool} here: {step.output.text}")
    during = [ep.telemetry.value(healthy, "error_rate", int(at) + m) for m in range(minutes)]
    after = ep.telemetry.value(healthy, "error_rate", int(at) + minutes + 1)
    assert all(v >= before + 0.25 for v in during), (before, during)
    assert after < before + 0.1
    assert ep.grade().component("unneeded_operations").value == pytest.approx(UNNEEDED_OPERATION)
