"""The grader: SWE-bench style hidden checks plus root cause, report, SLA and efficiency."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .faults import Fault
from .report import IncidentReport, locations_match
from .rewards import UNNEEDED_OPERATION, hint_price
from .scenarios.spec import ScenarioSpec, StateCheck, remedy_steps
from .soak import run_soak
from .telemetry import Telemetry
from .world import World

WEIGHTS: Mapping[str, float] = {
    "fix": 0.40,
    "no_regressions": 0.10,
    "root_cause": 0.20,
    "report": 0.10,
    "sla": 0.10,
    "efficiency": 0.10,
}
"""Weights of the positive components; they add up to 1."""

MEASURES: Mapping[str, str] = {
    "fix": "share of the fail-to-pass checks that pass through the soak",
    "no_regressions": "share of the pass-to-pass checks that pass, with a fix",
    "root_cause": "the report's root cause (service and location)",
    "report": "the report's category and remediation",
    "sla": "mitigation within the SLA",
    "efficiency": "steps used, with a resolution",
    "soak": "the world after the report",
    "symptom_changes": "penalty for changing code outside the root cause",
    "unneeded_operations": "penalty for operations the incident did not need",
    "hints": "the price of the hints asked",
}
"""What each component measures, in words that name nothing of the incident (a seat that does
not see everything is told these with the scores, not the details, which are written for the
whole incident)."""

SYMPTOM_CHANGE_PENALTY = -0.3
EFFICIENT_SHARE = 0.5
"""Steps up to this share of the budget earn full efficiency: an investigation costs nothing
against a guess, so a model that skips it never outscores one that looks (efficiency only
pays for not wandering)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GradeComponent:
    """One named part of the grade."""

    name: str
    score: float
    """In [0, 1] for the weighted parts; the penalty itself for penalties."""
    weight: float
    """0 for penalties, which are added as they are."""
    detail: str

    @property
    def value(self) -> float:
        """What this component adds to the total."""
        return self.score * self.weight if self.weight else self.score


@dataclass(frozen=True, slots=True, kw_only=True)
class Grade:
    """The team's grade for an episode."""

    total: float
    """In [0, 1]."""
    resolved: bool
    """Every FAIL_TO_PASS check passes and no PASS_TO_PASS check fails."""
    components: tuple[GradeComponent, ...]
    fail_to_pass: Mapping[str, bool]
    pass_to_pass: Mapping[str, bool]
    final: bool
    """False while the episode is still running (a provisional grade)."""

    def component(self, name: str) -> GradeComponent:
        """The component called `name`."""
        return next(c for c in self.components if c.name == name)


@dataclass(frozen=True, slots=True)
class EpisodeFacts:
    """What the grader needs to know about how the episode went."""

    steps: int
    clock: float
    mitigated_at: float | None
    """When the last fault was cured, None if one is still active."""
    report: IncidentReport | None
    changed_services: frozenset[str]
    """Services whose code the team changed."""
    operations: Sequence[tuple[str, str, str]]
    """(tool, service, target) of every successful operation."""
    unneeded_operations: Sequence[str]
    """Why each operation the incident did not need was not (see rewards.Shaper)."""
    hints: int
    faults: Sequence[Fault]
    """The episode's faults and their course; the soak runs copies of them on."""


def check_state(check: StateCheck, world: World, telemetry: Telemetry, minute: int) -> bool:
    """Whether a world-state check holds at `minute`."""
    svc = world.services[check.service]
    if check.kind == "deployed_version":
        return svc.version == check.version
    if check.kind == "healthy":
        return telemetry.signals(check.service, minute).health == "healthy"
    if check.kind == "migration_applied":
        return any(m.id == check.migration for m in world.applied_migrations(check.service))
    if check.kind == "migration_absent":
        return all(m.id != check.migration for m in world.applied_migrations(check.service))
    if check.kind == "knob_ok":
        return not world.knobs.holds(check.service, check, minute)
    return svc.replicas >= (check.replicas or 0)


def grade(
    spec: ScenarioSpec,
    code_checks: Mapping[str, bool],
    world: World,
    telemetry: Telemetry,
    facts: EpisodeFacts,
    *,
    final: bool,
) -> Grade:
    """Grade an episode as it stands.

    Args:
        spec: The scenario.
        code_checks: Per hidden check id, whether its probe observed what the reference world
            observes (``metasre.simulator.hidden``); a check it lacks counts as failing.
        world: The operational state, for the state checks.
        telemetry: The signals, for the state checks.
        facts: How the episode went.
        final: Whether the episode is over.
    """
    # The world runs on after the report: state checks count only if they hold through the
    # soak, and checks passed while a cause is still in place earn no cure's credit.
    soak = run_soak(spec, world, facts.faults, telemetry, code_checks, facts.clock, check_state)
    f2p = {i: code_checks.get(i, False) for i in spec.hidden.fail_to_pass}
    f2p.update({f"state::{name}": held for name, held in soak.state_held().items()})
    p2p = {i: code_checks.get(i, False) for i in spec.hidden.pass_to_pass}
    passed = sum(f2p.values()) / len(f2p) if f2p else 0.0
    kept = sum(p2p.values()) / len(p2p) if p2p else 1.0
    # A change that breaks what worked is no fix (SWE-bench's rule): else undoing every recent
    # commit, the culprit and others' work alike, would buy the fix for a share of P2P checks.
    fix = passed * soak.removed_share if kept == 1.0 else 0.0
    resolved = fix == 1.0 and kept == 1.0 and soak.clean
    truth = spec.ground_truth
    parts: list[GradeComponent] = [
        GradeComponent(
            name="fix",
            score=fix,
            weight=WEIGHTS["fix"],
            detail=f"{sum(f2p.values())}/{len(f2p)} FAIL_TO_PASS checks pass through the soak"
            + soak.fix_note()
            + ("" if kept == 1.0 else "; none counts: a PASS_TO_PASS check fails"),
        ),
        GradeComponent(
            name="no_regressions",
            score=kept * fix,
            weight=WEIGHTS["no_regressions"],
            detail=f"{sum(p2p.values())}/{len(p2p)} PASS_TO_PASS checks pass"
            + ("" if fix else "; counts only with a fix"),
        ),
    ]
    report = facts.report
    # A right diagnosis without a working fix earns half: the report alone resolves nothing.
    earned = 0.5 + 0.5 * fix
    if report is None:
        parts += [
            GradeComponent(
                name="root_cause", score=0.0, weight=WEIGHTS["root_cause"], detail="no report filed"
            ),
            GradeComponent(
                name="report", score=0.0, weight=WEIGHTS["report"], detail="no report filed"
            ),
        ]
    else:
        service_ok = report.root_cause_service.strip() == truth.service
        location_ok = locations_match(report.root_cause_location, truth.location)
        parts.append(
            GradeComponent(
                name="root_cause",
                score=(0.5 * service_ok + 0.5 * location_ok) * earned,
                weight=WEIGHTS["root_cause"],
                detail=f"service {'right' if service_ok else 'wrong'}, "
                f"location {'right' if location_ok else 'wrong'}"
                + ("" if fix == 1 else "; halved without a working fix"),
            )
        )
        category_ok = report.category == truth.category
        # An edit that changes no behaviour (a comment, whitespace, a rename) is no code fix.
        done = _remediation_done(report.remediation, truth.service, facts) and not (
            report.remediation == "code_fix" and soak.code_fails
        )
        remediation_ok = report.remediation == truth.remediation and done
        detail = f"category {'right' if category_ok else 'wrong'}, remediation " + (
            "right"
            if remediation_ok
            else "claimed but not done"
            if report.remediation == truth.remediation
            else "wrong"
        )
        parts.append(
            GradeComponent(
                name="report",
                score=(0.5 * category_ok + 0.5 * remediation_ok) * earned,
                weight=WEIGHTS["report"],
                detail=detail,
            )
        )
    # The SLA is about the customers' pain, so mitigation (every fault cured) is what counts.
    if facts.mitigated_at is not None and soak.relapses:
        sla = 0.0
        sla_detail = "not mitigated: " + "; ".join(
            f"{r.fault} came back at t+{r.at:.0f}, soak minute {r.soak_minute:.0f}"
            for r in soak.relapses
        )
    elif facts.mitigated_at is not None:
        late = max(0.0, facts.mitigated_at - spec.sla_minutes)
        sla = max(0.0, 1.0 - late / spec.sla_minutes)
        sla_detail = f"mitigated at t+{facts.mitigated_at:.1f} of {spec.sla_minutes:g} min"
    else:
        sla, sla_detail = 0.0, "not mitigated"
    parts.append(GradeComponent(name="sla", score=sla, weight=WEIGHTS["sla"], detail=sla_detail))
    free = EFFICIENT_SHARE * spec.step_budget
    over = max(0.0, facts.steps - free) / (spec.step_budget - free)
    efficiency = max(0.0, 1.0 - over) if resolved else 0.0
    parts.append(
        GradeComponent(
            name="efficiency",
            score=efficiency,
            weight=WEIGHTS["efficiency"],
            detail=f"{facts.steps}/{spec.step_budget} steps",
        )
    )
    parts.append(GradeComponent(name="soak", score=0.0, weight=0.0, detail=soak.detail()))
    symptom = facts.changed_services - {truth.service}
    if symptom:
        parts.append(
            GradeComponent(
                name="symptom_changes",
                score=SYMPTOM_CHANGE_PENALTY,
                weight=0.0,
                detail="changed code outside the root cause: " + ", ".join(sorted(symptom)),
            )
        )
    if facts.unneeded_operations:
        parts.append(
            GradeComponent(
                name="unneeded_operations",
                score=UNNEEDED_OPERATION * len(facts.unneeded_operations),
                weight=0.0,
                detail="; ".join(facts.unneeded_operations),
            )
        )
    if facts.hints:
        price = sum(hint_price(n) for n in range(1, facts.hints + 1))
        parts.append(
            GradeComponent(
                name="hints", score=-round(price, 6), weight=0.0, detail=f"{facts.hints} hints"
            )
        )
    total = min(1.0, max(0.0, sum(p.value for p in parts)))
    return Grade(
        total=round(total, 6),
        resolved=resolved,
        components=tuple(parts),
        fail_to_pass=f2p,
        pass_to_pass=p2p,
        final=final,
    )


PENDING = "judged when the episode ends"


def provisional(spec: ScenarioSpec, facts: EpisodeFacts) -> Grade:
    """What a grade can say while the episode runs: only what the world already shows.

    No hidden check has run (they run once, after the end), so the fix, the regressions, the
    diagnosis and the efficiency (which needs a resolution) are pending at 0; nor does it say
    which changes or operations the incident did not need (that would name the root cause
    and its remedy). It carries the SLA as the world shows it (every fault's signals
    recovered or not) and the hints already paid for.
    """
    parts = [
        GradeComponent(name=name, score=0.0, weight=WEIGHTS[name], detail=PENDING)
        for name in ("fix", "no_regressions", "root_cause", "report")
    ]
    if facts.mitigated_at is not None:
        late = max(0.0, facts.mitigated_at - spec.sla_minutes)
        sla = max(0.0, 1.0 - late / spec.sla_minutes)
        detail = f"signals recovered at t+{facts.mitigated_at:.1f} of {spec.sla_minutes:g} min"
    else:
        sla, detail = 0.0, "not mitigated"
    parts.append(
        GradeComponent(name="sla", score=sla, weight=WEIGHTS["sla"], detail=detail + "; " + PENDING)
    )
    parts.append(
        GradeComponent(name="efficiency", score=0.0, weight=WEIGHTS["efficiency"], detail=PENDING)
    )
    if facts.hints:
        price = sum(hint_price(n) for n in range(1, facts.hints + 1))
        parts.append(
            GradeComponent(
                name="hints", score=-round(price, 6), weight=0.0, detail=f"{facts.hints} hints"
            )
        )
    total = min(1.0, max(0.0, sum(p.value for p in parts)))
    return Grade(
        total=round(total, 6),
        resolved=False,
        components=tuple(parts),
        fail_to_pass={},
        pass_to_pass={},
        final=False,
    )


def _remediation_done(remediation: str, root: str, facts: EpisodeFacts) -> bool:
    """Whether the team did what `remediation` takes on the root service: each of its steps."""
    if remediation == "code_fix":
        return root in facts.changed_services
    done = {tool for tool, service, _ in facts.operations if service == root}
    return all(step & done for step in remedy_steps(remediation))
