"""twin-faults and parallel-sla: incidents of several independent faults, split among roles.

Proved through the simulator, on seeds spread over 0-99: every fault must be cured (curing
some leaves the episode unresolved and unmitigated), each fault's remedy counts as needed
(`GroundTruth.further_faults`), each declared role's view hides the evidence of at least one
fault while the on-call roles together can see and remedy every one; on parallel-sla, the solo
full-view expert mitigates after the SLA on every seed 0-49, while three seats working side by
side (one call each per round, a round costing its longest call) mitigate well within it.
"""

from __future__ import annotations

from typing import Any

import pytest

from metasre.agents.policies import ExpertPolicy
from metasre.conformance import EpisodeCaller
from metasre.simulator import Episode
from metasre.simulator.scenarios.spec import FurtherFault, GroundTruth, ScenarioSpec
from metasre.simulator.tools import get_tool
from metasre.simulator.views import View, owners_of, refusal

TWIN = "meta-sre/twin-faults-v2"
PARALLEL = "meta-sre/parallel-sla-v2"
FOLDERS = {TWIN: "twin_faults", PARALLEL: "parallel_sla"}
SEEDS = (0, 7, 19, 26, 38, 45, 53, 64, 71, 82, 90, 99)
ON_CALL = {
    TWIN: ("commerce-oncall", "platform-oncall"),
    PARALLEL: ("commerce-oncall", "media-oncall", "identity-oncall"),
}
"""The roles that own a part of the platform (twin-faults' commander owns only the edge)."""
SYMPTOM_FIRST = {TWIN, PARALLEL}
"""The reworked families (issue 25): the page names the roots' callers, not the roots."""


def _faults(spec: ScenarioSpec) -> list[GroundTruth | FurtherFault]:
    return [spec.ground_truth, *spec.ground_truth.further_faults]


def _remedy_steps(spec: ScenarioSpec) -> list[tuple[str, dict[str, Any]]]:
    """The reference solution's remedies, one per fault, in the faults' order."""
    return [(s.tool, dict(s.args)) for s in spec.solution if s.tool != "submit_report"]


def _report(spec: ScenarioSpec) -> dict[str, Any]:
    return dict(spec.solution[-1].args)


@pytest.mark.parametrize("family", [TWIN, PARALLEL])
def test_the_faults_lie_in_different_services_and_the_primary_pages_first(family):
    for seed in SEEDS:
        episode = Episode.make(family, seed)
        spec = episode.instance.spec
        services = [f.service for f in _faults(spec)]
        assert len(set(services)) == len(services) == len(ON_CALL[family]), services
        # The primary fault is the one behind the page's first alert (most severe, then oldest).
        alerts = episode.apply("look", "get_alerts", {}).output.data["alerts"]
        first = alerts[0]
        if family in SYMPTOM_FIRST:
            # What pages is a caller of the root in its half, never a root itself.
            truth = spec.ground_truth
            assert (first["service"], first["severity"]) == (truth.symptom_services[0], "P1")
            assert truth.service in episode.world.services[first["service"]].depends_on
            assert not {a["service"] for a in alerts} & set(services), (seed, alerts)
        else:
            assert (first["service"], first["severity"]) == (spec.ground_truth.service, "P1")


@pytest.mark.parametrize("family", [TWIN, PARALLEL])
def test_curing_some_faults_leaves_the_episode_unresolved_and_unmitigated(family):
    for seed in SEEDS:
        spec = Episode.make(family, seed).instance.spec
        steps = _remedy_steps(spec)
        assert len(steps) == len(_faults(spec))
        for left_out in range(len(steps)):
            episode = Episode.make(family, seed)
            for i, (tool, args) in enumerate(steps):
                if i != left_out:
                    assert episode.apply("sre", tool, args).ok, (seed, tool, args)
            grade = episode.apply("sre", "submit_report", _report(spec)).grade
            assert grade is not None
            assert not grade.resolved, (seed, left_out)
            assert grade.component("sla").detail == "not mitigated"
            assert grade.component("fix").score < 1.0
            assert grade.total <= 0.6, (seed, left_out, grade.total)


@pytest.mark.parametrize("family", [TWIN, PARALLEL])
def test_every_faults_remedy_is_needed_and_nothing_else_is(family):
    for seed in SEEDS:
        episode = Episode.make(family, seed)
        spec = episode.instance.spec
        for tool, args in _remedy_steps(spec):
            episode.apply("sre", tool, args)
        # One more operation, on a fault's root, that no fault needs.
        episode.apply("sre", "scale_service", {"service": spec.ground_truth.service, "replicas": 9})
        grade = episode.apply("sre", "submit_report", _report(spec)).grade
        assert grade is not None and grade.resolved
        unneeded = grade.component("unneeded_operations").detail
        assert unneeded.startswith("scale_service on ") and ";" not in unneeded, unneeded


def _view(spec: ScenarioSpec, role: str) -> View:
    return next(r.view for r in spec.roles if r.name == role)


def _sees_fault(spec: ScenarioSpec, view: View, fault: GroundTruth | FurtherFault) -> bool:
    """Whether `view` reaches any of a fault's evidence: its root's logs, settings, alert."""
    owners = owners_of(spec)
    looks = [
        ("read_logs", {"service": fault.service, "level": "WARN", "lines": 80}),
        ("get_config", {"service": fault.service}),
        ("describe_service", {"service": fault.service}),
        ("query_metrics", {"service": fault.service, "metric": "error_rate"}),
    ]
    return any(not refusal(view, get_tool(tool), args, owners) for tool, args in looks)


@pytest.mark.parametrize("family", [TWIN, PARALLEL])
def test_each_role_misses_a_faults_evidence_and_the_on_call_roles_cover_every_fault(family):
    for seed in SEEDS:
        episode = Episode.make(family, seed)
        spec = episode.instance.spec
        owners = owners_of(spec)
        for role in spec.roles:
            hidden = [f for f in _faults(spec) if not _sees_fault(spec, role.view, f)]
            assert hidden, f"seed {seed}: {role.name} sees the evidence of every fault"
            # What the role may call is cut too: the pager hides the hidden faults' alerts and
            # its log reader refuses their roots.
            alerts = episode.apply(role.name, "get_alerts", {}, view=role.view).output.data
            paged = {a["service"] for a in alerts["alerts"]}
            assert not paged & {f.service for f in hidden}, (seed, role.name, paged)
            for fault in hidden:
                why = refusal(role.view, get_tool("read_logs"), {"service": fault.service}, owners)
                assert "outside this seat's view" in why
        for fault, (tool, args) in zip(_faults(spec), _remedy_steps(spec), strict=True):
            fixers = [
                name
                for name in ON_CALL[family]
                if _sees_fault(spec, _view(spec, name), fault)
                and not refusal(_view(spec, name), get_tool(tool), args, owners)
            ]
            assert len(fixers) == 1, (seed, fault.service, fixers)


def _solo_expert(family: str, seed: int) -> Episode:
    episode = Episode.make(family, seed)
    ExpertPolicy().play(EpisodeCaller(episode), episode.observation().to_dict())
    return episode


def _mitigated_at(episode: Episode) -> float:
    detail = episode.grade().component("sla").detail
    assert detail.startswith("mitigated at t+"), detail
    return float(detail.removeprefix("mitigated at t+").split()[0])


def _looks(fault: GroundTruth | FurtherFault, tool: str) -> list[tuple[str, dict[str, Any]]]:
    """What the seat that owns a fault does before its remedy: the page, the root's log, and
    what the remedy acts on (the releases, or the settings)."""
    detail = "describe_service" if tool == "rollback_deployment" else "get_config"
    return [
        ("get_alerts", {}),
        ("read_logs", {"service": fault.service, "level": "WARN", "lines": 80}),
        (detail, {"service": fault.service}),
    ]


def _play_in_parallel(seed: int) -> Episode:
    """Three seats, one per on-call role, each taking its own fault: one call each per round."""
    episode = Episode.make(PARALLEL, seed)
    spec = episode.instance.spec
    owners = owners_of(spec)
    plans: list[tuple[str, View, list[tuple[str, dict[str, Any]]]]] = []
    for fault, (tool, args) in zip(_faults(spec), _remedy_steps(spec), strict=True):
        role = next(r for r in ON_CALL[PARALLEL] if _sees_fault(spec, _view(spec, r), fault))
        plans.append((role, _view(spec, role), [*_looks(fault, tool), (tool, args)]))
    for round_calls in zip(*(calls for _, _, calls in plans), strict=True):
        episode.begin_round()
        for (role, view, _), (tool, args) in zip(plans, round_calls, strict=True):
            assert not refusal(view, get_tool(tool), args, owners), (seed, role, tool, args)
            assert episode.apply(role, tool, args, view=view).ok, (seed, role, tool)
        episode.end_round()
    episode.apply(plans[0][0], "submit_report", _report(spec), view=plans[0][1])
    return episode


def test_the_solo_expert_misses_the_sla_where_three_seats_in_parallel_meet_it():
    sla = Episode.make(PARALLEL, 0).instance.spec.sla_minutes
    solo: list[float] = []
    for seed in range(50):
        episode = _solo_expert(PARALLEL, seed)
        assert episode.grade().resolved, seed
        solo.append(_mitigated_at(episode))
    assert min(solo) > sla, (min(solo), sla)
    for seed in range(0, 50, 5):
        team = _play_in_parallel(seed)
        grade = team.grade()
        assert grade.resolved and grade.total >= 0.95, (seed, grade.total)
        # Margin for a real team's extra looks and messages: at least a quarter of the SLA.
        assert _mitigated_at(team) <= 0.75 * sla, (seed, _mitigated_at(team))


def _minutes(tool: str) -> float:
    return get_tool(tool).minutes


def test_the_sla_lies_between_the_parallel_critical_path_and_the_same_work_in_sequence():
    """From the tools' minutes: the looks and remedies one after another overrun the SLA (the
    remedies alone take most of it); the same work split three ways (a round costs its longest
    call) fits with room to spare."""
    for seed in range(50):
        spec = Episode.make(PARALLEL, seed).instance.spec
        remedies = _remedy_steps(spec)
        seats = [
            [*_looks(f, tool), (tool, args)]
            for f, (tool, args) in zip(_faults(spec), remedies, strict=True)
        ]
        sequential = sum(_minutes(tool) for calls in seats for tool, _ in calls)
        critical = sum(max(_minutes(t) for t, _ in rnd) for rnd in zip(*seats, strict=True))
        assert sum(_minutes(tool) for tool, _ in remedies) >= 7.0, seed
        assert sequential > spec.sla_minutes, (seed, sequential)
        assert critical <= 0.6 * spec.sla_minutes, (seed, critical)


@pytest.mark.parametrize("family", [TWIN, PARALLEL])
def test_the_ground_truths_vary_with_the_seed(family):
    locations = {Episode.make(family, s).instance.spec.ground_truth.location for s in range(100)}
    assert len(locations) >= 20
