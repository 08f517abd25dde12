"""Fixes must hold: after the report the world runs on, and a mitigation that leaves the cause in
place is not a resolution (one case per remedy kind the families use), nor a mitigation once it
gives way; the soak never changes the episode it grades."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from metasre.simulator import Episode, resolve
from metasre.simulator.grader import Grade, check_state
from metasre.simulator.scenarios.spec import REMEDIATIONS, ScenarioSpec
from metasre.simulator.soak import describe_fault, run_soak

Mitigation = Callable[[ScenarioSpec], list[tuple[str, dict[str, Any]]]]


def _root(spec: ScenarioSpec) -> str:
    return spec.ground_truth.service


def restart(spec: ScenarioSpec) -> list[tuple[str, dict[str, Any]]]:
    """Restart the root service: the reflex that clears a symptom for a while."""
    return [("restart_service", {"service": _root(spec)})]


def scale_up(spec: ScenarioSpec) -> list[tuple[str, dict[str, Any]]]:
    """Two more replicas of the root: capacity thrown at whatever it is."""
    root = _root(spec)
    return [("scale_service", {"service": root, "replicas": spec.service(root).replicas + 2})]


def roll_back(spec: ScenarioSpec) -> list[tuple[str, dict[str, Any]]]:
    """Roll the root's release back: it takes a code bug out of service, not out of the code."""
    return [("rollback_deployment", {"service": _root(spec)})]


def clean_only(spec: ScenarioSpec) -> list[tuple[str, dict[str, Any]]]:
    """Free the disk and leave the DEBUG logging that fills it on."""
    return [("clean_disk", {"service": _root(spec)})]


# (remedy kind, family, the kind of fault the seed must have, a mitigation that leaves its
# cause in place). Every remedy kind a family's seeds use as their remedy is here.
CASES: list[tuple[str, str, str, Mitigation]] = [
    ("code_fix", "ad-ranking-crash", "code", roll_back),
    ("code_fix", "db-connection-leak", "code", restart),
    ("rollback_deployment", "checkout-crash-loop", "deployment", restart),
    ("rollback_deployment", "user-service-oom", "deployment", scale_up),
    ("rollback_migration", "slow-query", "migration", scale_up),
    ("restart_service", "checkout-crash-loop", "crash_loop", scale_up),
    ("scale_service", "user-service-oom", "memory_leak", restart),
    ("scale_service", "auth-traffic-spike", "capacity", restart),
    ("rollback_config", "bad-config-push", "knob", restart),
    ("rollback_config", "retry-storm", "knob", scale_up),
    ("set_feature_flag", "feature-flag-rollout", "knob", restart),
    ("renew_certificate", "tls-cert-expiry", "knob", restart),
    ("sync_clock", "clock-skew", "knob", restart),
    ("clean_disk", "disk-full", "knob", clean_only),
    ("skip_message", "consumer-lag", "knob", restart),
]


def _seed(family: str, remedy: str, fault_kind: str) -> int:
    """The first seed of `family` whose remedy and primary fault are of these kinds."""
    for seed in range(60):
        spec = resolve(family).spec(seed)
        if spec.ground_truth.remediation == remedy and spec.faults[0].kind == fault_kind:
            return seed
    raise AssertionError(f"{family} has no {remedy} seed with a {fault_kind} fault in 0-59")


def _report(spec: ScenarioSpec) -> tuple[str, dict[str, Any]]:
    """The reference's own report: the diagnosis exactly right, the strongest claim."""
    step = spec.solution[-1]
    assert step.tool == "submit_report"
    return step.tool, dict(step.args)


def _play(family: str, seed: int, calls: list[tuple[str, dict[str, Any]]]) -> Grade:
    episode = Episode.make(family, seed)
    for tool, args in calls:
        assert episode.apply("agent", tool, args).ok, (tool, args)
    grade = episode.grade()
    assert grade.final
    return grade


def _parts(grade: Grade) -> dict[str, Any]:
    return {c.name: c for c in grade.components}


@pytest.mark.parametrize(
    ("remedy", "family", "fault_kind", "mitigation"),
    CASES,
    ids=[f"{r}-{f}-{m.__name__}" for r, f, _, m in CASES],
)
def test_a_mitigation_that_leaves_the_cause_is_not_resolved(remedy, family, fault_kind, mitigation):
    seed = _seed(family, remedy, fault_kind)
    spec = resolve(family).spec(seed)
    grade = _play(family, seed, [*mitigation(spec), _report(spec)])
    parts = _parts(grade)
    assert not grade.resolved, (family, seed, parts["soak"].detail)
    assert parts["fix"].score < 1.0 and parts["efficiency"].score == 0.0
    # The soak says why: a fault never cured, one that came back, or a cause left in place.
    assert any(
        why in parts["soak"].detail
        for why in ("never mitigated", "relapsed", "cause left in place")
    ), parts["soak"].detail
    if "mitigated at" in parts["sla"].detail:
        # Mitigation credit only while it holds: whatever kept it, held to the soak's end.
        assert "relapsed" not in parts["soak"].detail

    reference = _play(family, seed, [(s.tool, dict(s.args)) for s in spec.solution])
    assert reference.resolved and reference.total >= 0.9, _parts(reference)["soak"].detail
    assert _parts(reference)["soak"].detail.startswith("every fault stayed cured")


def test_every_remedy_kind_has_a_case():
    """Every remedy a report can name: warm_cache is only ever a further fault's remedy (in
    parallel-sla), so it has a test of its own below."""
    assert {remedy for remedy, *_ in CASES} | {"warm_cache"} == set(REMEDIATIONS)


@pytest.mark.parametrize("instead", ["scale-up", "warm-then-restart"])
def test_a_cold_cache_not_kept_warm_leaves_a_several_fault_incident_unresolved(instead):
    """parallel-sla seed 0: the release and the certificate remedied, and the cold cache of
    url-signer given capacity instead of a warm cache, or warmed and then emptied by a
    restart; the report exactly right."""
    family, seed = "parallel-sla", 0
    spec = resolve(family).spec(seed)
    cache = next(f.service for f in spec.faults if f.params.get("knob") == "cache")
    others = [(s.tool, dict(s.args)) for s in spec.solution if s.tool not in ("warm_cache",)]
    report = others.pop()
    mitigation = (
        [("scale_service", {"service": cache, "replicas": spec.service(cache).replicas + 2})]
        if instead == "scale-up"
        else [("warm_cache", {"service": cache}), ("restart_service", {"service": cache})]
    )
    grade = _play(family, seed, [*others, *mitigation, report])
    parts = _parts(grade)
    assert not grade.resolved and parts["fix"].score < 1.0
    assert f"never mitigated: cache on {cache}" in parts["soak"].detail
    assert parts["sla"].detail == "not mitigated"


def test_a_rollback_hiding_a_code_bug_keeps_mitigation_credit_and_earns_no_cure():
    spec = resolve("ad-ranking-crash").spec(0)
    parts = _parts(_play("ad-ranking-crash", 0, [*roll_back(spec), _report(spec)]))
    assert parts["sla"].score == 1.0 and parts["sla"].detail.startswith("mitigated at")
    # The root is healthy behind the old release, but that check is no cure's credit.
    assert parts["fix"].score == 0.0 and "a cause is left in place" in parts["fix"].detail
    assert "hidden by a rollback" in parts["soak"].detail
    assert parts["report"].detail.endswith("remediation claimed but not done")


@pytest.mark.parametrize("extra_cleans", [0, 1, 3])
def test_a_cleaned_disk_that_fills_again_loses_its_mitigation_at_the_minute_it_relapses(
    extra_cleans,
):
    """Cleaning again (right before the report too) only moves the minute it comes back."""
    spec = resolve("disk-full").spec(0)
    calls = clean_only(spec) + [("get_alerts", {})] + clean_only(spec) * extra_cleans
    grade = _play("disk-full", 0, [*calls, _report(spec)])
    parts = _parts(grade)
    assert not grade.resolved
    assert parts["sla"].score == 0.0 and parts["sla"].detail.startswith("not mitigated:")
    assert "came back at t+" in parts["sla"].detail
    assert "relapsed: disk on" in parts["soak"].detail and "soak minute" in parts["soak"].detail
    assert parts["fix"].score == 0.0


def test_a_soak_too_short_to_see_the_relapse_still_finds_the_cause_in_place():
    """With a quarter hour of soak, cleaning alone holds (mitigation credit), but the disk would
    fill again within a day: no resolution."""
    episode = Episode.make("disk-full", 0)
    spec = episode.instance.spec
    assert episode.apply("agent", "clean_disk", {"service": _root(spec)}).ok
    short = spec.model_copy(update={"soak_minutes": 15.0})
    soak = run_soak(
        short,
        episode.world,
        episode.faults,
        episode.telemetry,
        {},
        episode.clock,
        check_state,
    )
    assert soak.held and not soak.relapses
    assert not soak.clean and soak.removed_share == 0.0
    assert any("within a day" in why for why in soak.causes_left), soak.causes_left


def _noop_edits(episode: Episode) -> list[list[tuple[str, dict[str, Any]]]]:
    """Edits of the buggy line that change no behaviour: a comment, a blank line, whitespace."""
    truth = episode.instance.spec.ground_truth
    assert truth.lines is not None
    path, line = truth.location, truth.lines[0]
    text = episode.workspace.read(path).splitlines()[line - 1]
    return [
        [("edit_lines", {"path": path, "action": "insert", "start_line": line,
                         "content": "# handles the new feature rows"})],
        [("edit_lines", {"path": path, "action": "insert", "start_line": line, "content": "\n"})],
        [("edit_lines", {"path": path, "action": "replace", "start_line": line,
                         "content": text + "   "})],
    ]  # fmt: skip


@pytest.mark.parametrize("which", ["comment", "blank-line", "trailing-space"])
def test_an_edit_that_changes_no_behaviour_is_not_a_fix(which):
    family, seed = "ad-ranking-crash", 0
    spec = resolve(family).spec(seed)
    edits = _noop_edits(Episode.make(family, seed))[
        ["comment", "blank-line", "trailing-space"].index(which)
    ]
    grade = _play(family, seed, [*edits, _report(spec)])
    parts = _parts(grade)
    assert not grade.resolved and parts["fix"].score == 0.0
    assert parts["report"].detail.endswith("remediation claimed but not done")
    assert parts["sla"].detail == "not mitigated"
    assert "never mitigated" in parts["soak"].detail


def test_grading_changes_nothing_replay_needs():
    """An episode graded after every call ends exactly like one graded only at its end."""
    spec = resolve("disk-full").spec(0)
    calls = [*clean_only(spec), ("get_alerts", {}), _report(spec)]
    graded, plain = Episode.make("disk-full", 0), Episode.make("disk-full", 0)
    for tool, args in calls:
        events = [list(f._events) for f in graded.faults]
        world_events = list(graded.world.events)
        if graded.phase.value == "running":
            first = graded.grade()
            assert graded.grade() == first  # a pure function of the episode
        assert [list(f._events) for f in graded.faults] == events
        assert graded.world.events == world_events
        a, b = graded.apply("agent", tool, args), plain.apply("agent", tool, args)
        assert (a.output.text, a.clock, a.reward.total) == (b.output.text, b.clock, b.reward.total)
    assert graded.grade() == plain.grade()


def _plain_soak(episode: Episode, code_checks: dict[str, bool]) -> tuple[Any, ...]:
    """The soak the slow way: every fault and every check read at every minute."""
    spec = episode.instance.spec
    clock, world = episode.clock, episode.world
    code_fails = not all(code_checks.get(i, False) for i in spec.hidden.fail_to_pass)
    forks = [f.copy() for f in episode.faults]
    settled = int(clock + spec.hidden.settle_minutes)
    end = int(clock + spec.hidden.settle_minutes + spec.soak_minutes)
    for fork in forks:
        fork.update(world, code_fails, clock)
    relapses = []
    for minute in range(int(clock) + 1, end + 1):
        for fork in forks:
            cured = fork.cured_at()
            if fork.update(world, code_fails, float(minute)) == "on" and cured is not None:
                relapses.append((describe_fault(fork.spec), float(minute)))
    telemetry = episode.telemetry.with_faults(forks)
    state = {
        c.name: next(
            (m for m in range(settled, end + 1) if not check_state(c, world, telemetry, m)), None
        )
        for c in spec.hidden.state_checks
    }
    return sorted(relapses), state


MOVES: list[tuple[str, int, Mitigation | None]] = [
    ("disk-full", 0, clean_only),
    ("disk-full", 3, None),
    ("user-service-oom", 0, restart),
    ("checkout-crash-loop", 2, restart),
    ("twin-faults", 0, None),
    ("parallel-sla", 1, None),
    ("tls-cert-expiry", 0, None),
]


@pytest.mark.parametrize(("family", "seed", "mitigation"), MOVES)
def test_the_soak_reads_what_a_minute_by_minute_soak_reads(family, seed, mitigation):
    """Bisection and health read where signals move find what reading every minute finds."""
    episode = Episode.make(family, seed)
    spec = episode.instance.spec
    calls = (
        mitigation(spec)
        if mitigation
        else [(s.tool, dict(s.args)) for s in spec.solution if s.tool != "submit_report"]
    )
    for tool, args in calls:
        assert episode.apply("agent", tool, args).ok
    soak = run_soak(spec, episode.world, episode.faults, episode.telemetry, {}, episode.clock,
                    check_state)  # fmt: skip
    relapses, state = _plain_soak(episode, {})
    assert sorted((r.fault, r.at) for r in soak.relapses) == relapses
    assert dict(soak.state) == state
