"""The soak: after the report the world runs on, untouched, and a fix counts only if it holds.

The grader reads the incident's state checks not once but over a soak
(`ScenarioSpec.soak_minutes`, after the `settle_minutes` the signals need to recover), and
watches every fault from the report to the soak's end: a mitigation that lets a cured fault
come back (a disk cleaned while DEBUG logging fills it again) loses its mitigation credit at
the minute it relapses, and one that never cured it (a restart that only resets a leak) never
had it. The cure's credit goes to removing the cause: a fault
whose cause is still in place (the bug still in the code behind a rolled-back release, a knob
that drifts back within a day) earns no resolution credit, even while the mitigation holds.

Nobody operates the world during the soak, so what moves with time moves one way (a disk
fills, a certificate expires, a fault once back stays back): the minute a fault relapses or a
check starts failing is found by bisection, and health, which recovers and ramps, is read at
both ends and wherever a relapsed fault's strength moves. `tests/simulator/test_soak.py` holds
this equal to reading every minute.

The soak is a pure function of the episode: it advances copies of the faults (`Fault.copy`)
over the world as the episode left it, which it only reads, so replay, recovery and
counterfactual credit see exactly what they would have seen without it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .faults import Fault
from .scenarios.spec import FaultSpec, ScenarioSpec, StateCheck
from .telemetry import Telemetry
from .world import World

CAUSE_HORIZON_MINUTES = 24 * 60.0
"""How far past the soak the grader looks for a runtime setting that drifts back on its own
(a disk that DEBUG logging fills again, a certificate about to expire): a fault that would be
back within a day has its cause still in place, however long it stayed away."""

StateReader = Callable[[StateCheck, World, Telemetry, int], bool]
"""How the grader reads one state check at one minute (`grader.check_state`)."""


@dataclass(frozen=True, slots=True)
class Relapse:
    """A fault that was cured and came back during the soak."""

    fault: str
    """Which fault, as `describe_fault` names it."""
    cured_at: float
    """Simulated minute it was last cured (minutes since the page)."""
    at: float
    """Simulated minute it came back."""
    soak_minute: float
    """Minutes after the report it came back."""


@dataclass(frozen=True, slots=True)
class Soak:
    """What the world did after the report, as the grader reads it."""

    report_at: float
    """Simulated minute of the report (or of the grade, for a running episode)."""
    settled_at: int
    """First whole minute the state checks are read: the report plus `settle_minutes`."""
    end: int
    """Last whole minute read: the settled minute plus `soak_minutes`."""
    active_at_report: tuple[str, ...]
    """Faults still active when the report was filed: the incident was not mitigated."""
    relapses: tuple[Relapse, ...]
    """Faults cured by the report that came back before the soak's end."""
    causes_left: tuple[str, ...]
    """Per fault whose cause is still in place, what is left (the rest were removed)."""
    faults: int
    """How many faults the incident has."""
    state: Mapping[str, int | None]
    """Per state check name, the first whole minute of the soak it failed; None if it held
    from the settled minute to the end."""
    code_fails: bool
    """The code still fails a FAIL_TO_PASS code check: a code fix is not done (an edit that
    changes no behaviour changes none of what the checks observe)."""

    @property
    def held(self) -> bool:
        """Every fault was cured by the report and stayed cured to the soak's end."""
        return not self.active_at_report and not self.relapses

    @property
    def removed_share(self) -> float:
        """The share of the incident's faults whose cause is gone: the cure's credit."""
        return (self.faults - len(self.causes_left)) / self.faults if self.faults else 1.0

    @property
    def clean(self) -> bool:
        """Held, every cause removed and every state check held: the fix holds."""
        return self.held and not self.causes_left and all(v is None for v in self.state.values())

    def fix_note(self) -> str:
        """What the `fix` component's detail adds when a cause is left in place, else ''."""
        if not self.causes_left:
            return ""
        kept = self.faults - len(self.causes_left)
        return f"; counts {kept}/{self.faults}: a cause is left in place"

    def state_held(self) -> dict[str, bool]:
        """Per state check name, whether it held at every minute of the soak."""
        return {name: failed is None for name, failed in self.state.items()}

    def detail(self) -> str:
        """What held and what relapsed, at which minute: the `soak` component's text."""
        window = (
            f"t+{self.settled_at}..t+{self.end} ({self.end - self.settled_at} min after "
            f"settling, report at t+{self.report_at:.1f})"
        )
        parts: list[str] = []
        for name in self.active_at_report:
            parts.append(f"never mitigated: {name}")
        for r in self.relapses:
            parts.append(
                f"relapsed: {r.fault} (cured at t+{r.cured_at:.1f}, back at t+{r.at:.0f},"
                f" soak minute {r.soak_minute:.0f})"
            )
        for why in self.causes_left:
            parts.append(f"cause left in place: {why}")
        failed = {n: m for n, m in self.state.items() if m is not None}
        held = [n for n, m in self.state.items() if m is None]
        for name, minute in failed.items():
            parts.append(f"check failed from t+{minute}: {name}")
        if held:
            parts.append(f"held: {', '.join(held)}")
        if self.held and not self.causes_left:
            parts.insert(0, f"every fault stayed cured over {window}")
        else:
            parts.insert(0, f"soak over {window}")
        return "; ".join(parts)


def describe_fault(spec: FaultSpec) -> str:
    """A fault as the soak names it: its kind, what it is about and its service."""
    if spec.kind == "knob":
        return f"{spec.params['knob']} on {spec.service}"
    if spec.kind == "deployment":
        return f"release {spec.params['bad_version']} of {spec.service}"
    if spec.kind == "migration":
        return f"migration {spec.params['migration']} on {spec.service}"
    return f"{spec.kind.replace('_', ' ')} on {spec.service}"


def run_soak(
    spec: ScenarioSpec,
    world: World,
    faults: Sequence[Fault],
    telemetry: Telemetry,
    code_checks: Mapping[str, bool],
    clock: float,
    read_state: StateReader,
) -> Soak:
    """Let the world run on from `clock` and read what held.

    Args:
        spec: The scenario (its `soak_minutes`, settle minutes, faults and state checks).
        world: The operational state as the episode left it; only read.
        faults: The episode's faults; copied, never changed.
        telemetry: The episode's signals; a twin over the copies reads the soak.
        code_checks: Per hidden check id, whether the code observes what the reference does.
        clock: The report's simulated minute.
        read_state: How one state check is read at one minute.
    """
    code_fails = not all(code_checks.get(i, False) for i in spec.hidden.fail_to_pass)
    forks = [f.copy() for f in faults]
    settled = int(clock + spec.hidden.settle_minutes)
    end = int(clock + spec.hidden.settle_minutes + spec.soak_minutes)
    # The code checks are the grader's own verdict: a fault the episode still counted as
    # active (its code was judged later) is settled at the report, before the soak watches.
    for fork in forks:
        fork.update(world, code_fails, clock)
    active = tuple(describe_fault(f.spec) for f in forks if f.active)
    watched = list(range(int(clock) + 1, end + 1))
    relapses: list[Relapse] = []
    # Where a fault's strength moves after a relapse: health is read there.
    moving = {settled, end}
    for fork in forks:
        cured = fork.cured_at()
        if cured is None:
            continue

        def back_at(minute: int, fault: Fault = fork) -> bool:
            return fault.wants_active(world, code_fails, float(minute))

        back = _first(watched, back_at)
        if back is not None:
            fork.update(world, code_fails, float(back))
            relapses.append(Relapse(describe_fault(fork.spec), cured, float(back), back - clock))
            moving.update(range(back, back + int(fork.spec.ramp_minutes) + 2))
    causes = tuple(
        why for fork in forks if (why := _cause_left(fork, world, code_fails, end)) is not None
    )
    soaked = telemetry.with_faults(forks)
    every = list(range(settled, end + 1))
    health_reads = sorted(m for m in moving if settled <= m <= end)
    state: dict[str, int | None] = {}
    for check in spec.hidden.state_checks:

        def fails(minute: int, check: StateCheck = check) -> bool:
            return not read_state(check, world, soaked, minute)

        if check.kind == "healthy":
            state[check.name] = next((m for m in health_reads if fails(m)), None)
        else:
            state[check.name] = settled if fails(settled) else _first(every, fails)
    relapses.sort(key=lambda r: r.at)
    return Soak(clock, settled, end, active, tuple(relapses), causes, len(forks), state, code_fails)


def _first(minutes: Sequence[int], happens: Callable[[int], bool]) -> int | None:
    """The first of `minutes` (ascending) at which `happens` holds, if it holds at the last.

    Nobody operates the world during the soak, so what moves moves one way: a disk fills, a
    certificate expires, a fault that is back stays back. What holds once holds to the end,
    and bisection finds where it began in a few reads instead of one a minute. Signals are the
    exception (they recover, and ramp): `run_soak` reads health where they move instead.
    """
    if not minutes or not happens(minutes[-1]):
        return None
    lo, hi = 0, len(minutes) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if happens(minutes[mid]):
            hi = mid
        else:
            lo = mid + 1
    return minutes[lo]


def _cause_left(fault: Fault, world: World, code_fails: bool, end: int) -> str | None:
    """What of `fault`'s cause is still in place at the soak's end, or None if it is gone."""
    spec, name = fault.spec, describe_fault(fault.spec)
    if spec.kind == "code":
        # A rollback takes the bad code out of service; the bug is still in the code, and the
        # next release ships it again.
        if code_fails:
            hidden = "" if fault.wants_active(world, True, float(end)) else ", hidden by a rollback"
            return f"{name}: the code still fails its FAIL_TO_PASS checks{hidden}"
        return None
    if fault.wants_active(world, code_fails, float(end)):
        return f"{name}: still active at t+{end}"
    if spec.kind == "knob" and fault.wants_active(world, code_fails, end + CAUSE_HORIZON_MINUTES):
        return f"{name}: comes back on its own within a day of the soak"
    return None


__all__ = [
    "CAUSE_HORIZON_MINUTES",
    "Relapse",
    "Soak",
    "StateReader",
    "describe_fault",
    "run_soak",
]
