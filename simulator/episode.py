"""An episode: one scenario, one seed, and the ordered tool calls of one or more agents."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from types import MappingProxyType
from typing import Any, Protocol

from .alerts import AlertRules
from .catalog import Catalog, default_catalog
from .clock import incident_start
from .errors import EpisodeOverError
from .faults import Fault
from .grader import (
    SYMPTOM_CHANGE_PENALTY,
    EpisodeFacts,
    Grade,
    grade,
    provisional,
)
from .hidden import HiddenChecks, grading_cost
from .logs import LogRenderer, ServedLine
from .observation import AlertView, Observation, ServiceRow
from .paths import is_within
from .report import IncidentReport
from .rewards import (
    UNNEEDED_OPERATION,
    CallFacts,
    RewardUpdate,
    Shaper,
    hint_price,
)
from .sandbox import ProbeRunner, RunReport, TestRunner
from .scenarios.loader import ScenarioInstance
from .scenarios.registry import resolve
from .scenarios.spec import SolutionStep
from .telemetry import Telemetry
from .tools import get_tool, validate_args
from .tools.base import Tool, ToolOutput
from .traffic import TrafficCheck
from .vfs import Workspace
from .views import FULL, View
from .world import World

TERMINAL_LINES = 12


class EpisodePhase(enum.Enum):
    """Where an episode is in its life."""

    RUNNING = "running"
    TERMINATED = "terminated"
    """The report was submitted."""
    TRUNCATED = "truncated"
    """The step budget ran out first."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StepResult:
    """Everything one applied call produced."""

    tick: int
    """1 for the first call of the episode, then 2, 3, ...: the applied order."""
    agent_id: str
    tool: str
    args: Mapping[str, Any]
    """The validated arguments, defaults filled in."""
    output: ToolOutput
    minutes: float
    """Simulated minutes the call took."""
    clock: float
    """Simulated minutes since the page, after the call."""
    reward: RewardUpdate
    phase: EpisodePhase
    grade: Grade | None
    """The final grade, on the call that ended the episode."""
    costly: bool = False
    """The call cost the grade (an operation the incident did not need, a hint)."""

    @property
    def ok(self) -> bool:
        """False when the world refused the call (a missing file, an unknown service)."""
        return self.output.ok

    @property
    def done(self) -> bool:
        """True on the call that ended the episode."""
        return self.phase is not EpisodePhase.RUNNING


class StepTarget(Protocol):
    """What scripted steps are played on: an episode, or a recorder standing in for one."""

    def apply(self, agent_id: str, tool: str, args: Mapping[str, Any] | None = None) -> Any:
        """Apply one call."""
        ...


def _check_effects(tool: Tool, output: ToolOutput) -> None:
    """A tool's output carries the effects its traits declare, and only those.

    The shaping prices and the grade judges what the effects say: a successful operation with
    no `operation` effect would be free and unseen, a report with no `report` would not end the
    episode. A tool that breaks this is a bug, refused here on every call rather than found by
    an agent.

    Raises:
        RuntimeError: the output and the tool's traits disagree.
    """
    declared = (
        ("operation", output.operation, tool.operates),
        ("report", output.report, tool.ends_episode),
        ("message", output.message, tool.sends_message),
        ("patch", output.patch, tool.changes_code),
    )
    for name, effect, wanted in declared:
        if effect is not None and (not output.ok or not wanted):
            raise RuntimeError(f"tool {tool.name} returned a {name} effect it does not declare")
        if effect is None and output.ok and wanted:
            raise RuntimeError(f"tool {tool.name} succeeded without its {name} effect")


def play_steps(
    target: StepTarget, steps: Sequence[SolutionStep], agent_id: str = "reference"
) -> list[tuple[str, dict[str, Any]]]:
    """Apply a scenario's scripted steps (its solution, its wrong fix) as `agent_id`.

    A step is a call exactly as an agent sends it on the wire (an edit names its line by
    number or by its text, `find`), so it is applied as it is.

    Returns:
        The calls applied, in order.
    """
    played = []
    for step in steps:
        args = dict(step.args)
        target.apply(agent_id, step.tool, args)
        played.append((step.tool, args))
    return played


class Episode:
    """A deterministic incident: the same scenario, seed and ordered calls give the same results.

    Several agents may act in one episode; the caller serialises their calls, and each result is
    credited to the agent that made the call.
    """

    def __init__(
        self,
        instance: ScenarioInstance,
        runner: TestRunner | None = None,
        hidden: HiddenChecks | None = None,
        traffic: TrafficCheck | None = None,
        *,
        catalog: Catalog | None = None,
    ) -> None:
        """Start an episode at the page.

        Args:
            instance: The scenario rendered for a seed.
            runner: Where the agents' visible suites run (``run_tests``); the shared one if None.
            hidden: Judges the hidden checks, in a grader runner of its own, once the episode
                has ended (or when a caller of the library asks `grade`); the shared one if
                None. No call of a running episode consults it.
            traffic: Replays the production traffic on the code after each change, in a
                traffic runner of its own: the world's reaction to a code change. The shared
                one if None. No two of the three share a process.
            catalog: Where the runner, hidden and traffic not given come from; the
                process's own (`default_catalog`) if None.
        """
        spec = instance.spec
        self._instance = instance
        catalog = catalog if catalog is not None else default_catalog()
        self._runner = runner if runner is not None else catalog.runner
        self._hidden = hidden if hidden is not None else catalog.hidden
        self._traffic = traffic if traffic is not None else catalog.traffic
        self._served: list[ServedLine] = []
        self._reference = False
        self._workspace = Workspace(instance.tree)
        self._world = World(spec)
        self._faults = tuple(Fault(f) for f in spec.faults)
        self._start = incident_start(spec.id, instance.seed)
        self._telemetry, self._logs, self._alerts = self._readers()
        # The pager's alerts and dashboard rows at (telemetry version, minute): only the clock
        # moves between most calls, and within a minute nothing they show does.
        self._board: tuple[int, int, tuple[AlertView, ...], tuple[ServiceRow, ...]] | None = None
        self._clock = 0.0
        self._round_start: float | None = None
        self._tick = 0
        self._agent = ""
        self._view = FULL
        self._phase = EpisodePhase.RUNNING
        self._report: IncidentReport | None = None
        self._grade: Grade | None = None
        # The bug is in the code at the start (validate proves it), so no sandbox run is needed
        # until someone edits.
        self._has_code_fault = any(f.kind == "code" for f in spec.faults)
        self._code_checks_fail = self._has_code_fault
        self._operations: list[tuple[str, str, str]] = []
        self._terminal: list[str] = []
        self._messages: list[tuple[int, str, tuple[str, ...], str]] = []
        required = [
            c.replicas
            for c in spec.hidden.state_checks
            if c.kind == "replicas_at_least" and c.service == spec.ground_truth.service
        ]
        self._shaper = Shaper(spec.ground_truth, required[0] if required else None)
        self._costs: dict[str, float] = {}
        """Each agent's own costs in the grade so far: its unneeded operations and hints."""
        self._code_dirs = sorted(
            ((s.code_dir.strip("/"), s.name) for s in spec.services if s.code_dir),
            key=lambda p: -len(p[0]),
        )

    @classmethod
    def make(
        cls,
        scenario_id: str,
        seed: int,
        runner: TestRunner | None = None,
        hidden: HiddenChecks | None = None,
        traffic: TrafficCheck | None = None,
        *,
        catalog: Catalog | None = None,
    ) -> Episode:
        """Start an episode of a registered scenario (by id, or name for the newest version)."""
        return cls(resolve(scenario_id).instance(seed), runner, hidden, traffic, catalog=catalog)

    def play_steps(
        self, steps: Sequence[SolutionStep], agent_id: str = "reference"
    ) -> list[tuple[str, dict[str, Any]]]:
        """Apply a scenario's scripted steps (its solution, its wrong fix); see `play_steps`."""
        return play_steps(self, steps, agent_id)

    # -- what handlers see (ToolContext) -------------------------------------------------------

    @property
    def instance(self) -> ScenarioInstance:
        """The rendered scenario."""
        return self._instance

    @property
    def workspace(self) -> Workspace:
        """The episode's code tree."""
        return self._workspace

    @property
    def world(self) -> World:
        """The operational state."""
        return self._world

    @property
    def telemetry(self) -> Telemetry:
        """Signals per service and minute."""
        return self._telemetry

    @property
    def logs(self) -> LogRenderer:
        """Log lines per service and minute."""
        return self._logs

    @property
    def alerts(self) -> AlertRules:
        """The scenario's alert rules over the telemetry."""
        return self._alerts

    @property
    def faults(self) -> tuple[Fault, ...]:
        """The scenario's faults and their course so far."""
        return self._faults

    @property
    def clock(self) -> float:
        """Simulated minutes since the page."""
        return self._clock

    @property
    def minute(self) -> int:
        """The current whole simulated minute."""
        return int(self._clock // 1)

    @property
    def start_time(self) -> datetime:
        """When the page went off, in simulated UTC."""
        return self._start

    @property
    def agent_id(self) -> str:
        """The agent whose call is being applied."""
        return self._agent

    @property
    def view(self) -> View:
        """What the caller of the call being applied may see."""
        return self._view

    @property
    def hints_given(self) -> int:
        """Hints asked for so far."""
        return self._shaper.hints

    def service_of_path(self, path: str) -> str | None:
        """The service whose code folder holds `path`, if any."""
        for prefix, name in self._code_dirs:
            if is_within(path, prefix):
                return name
        return None

    def run_visible_suite(self, suite: str, path: str | None) -> tuple[RunReport, list[str]]:
        """Run the visible tests of `suite` (under `path`, if given) on the current code."""
        root = f"tests/{suite}"
        try:
            candidates = self._workspace.walk(root) if self._workspace.exists(root) else []
        except Exception:  # a malformed path filter simply selects nothing
            candidates = []
        tests = [
            p
            for p in candidates
            if p.rpartition("/")[2].startswith("test_")
            and p.endswith(".py")
            and (path is None or is_within(p, path.strip("/")))
        ]
        if not tests:
            return RunReport("completed", (), "", ""), []
        files = self._runtime_files()
        changed = set(self._workspace.changed_files())
        # what every session of this scenario and seed has: a runner may keep only that
        shared = [p for p in files if p not in changed]
        return self._runner.run(files, tests, shared=shared), tests

    # -- the episode's own surface --------------------------------------------------------------

    @property
    def phase(self) -> EpisodePhase:
        """Running, terminated (report filed) or truncated (budget spent)."""
        return self._phase

    @property
    def tick(self) -> int:
        """How many calls have been applied."""
        return self._tick

    @property
    def steps_left(self) -> int:
        """Calls left before the episode is truncated."""
        return self._instance.spec.step_budget - self._tick

    @property
    def messages(self) -> tuple[tuple[int, str, tuple[str, ...], str], ...]:
        """(tick, sender, recipients, text) of every message, oldest first."""
        return tuple(self._messages)

    def apply(
        self,
        agent_id: str,
        tool: str,
        args: Mapping[str, Any] | None = None,
        view: View = FULL,
    ) -> StepResult:
        """Apply one agent's tool call to the world.

        `view`: what the caller may see; the tool cuts its output to it. It changes nothing
        else: a call aimed at what it hides must be refused before (`views.refusal`).

        Raises:
            EpisodeOverError: the episode has ended.
            UnknownToolError: no such tool.
            InvalidToolCallError: the arguments fail the tool's schema; nothing is applied.
        """
        if self._phase is not EpisodePhase.RUNNING:
            raise EpisodeOverError(
                f"the episode is {self._phase.value} after {self._tick} calls; reset to play again"
            )
        spec_tool = get_tool(tool)
        parsed = validate_args(spec_tool, args)
        self._agent = agent_id
        self._view = view
        try:
            output = spec_tool.handler(self, parsed)
        finally:
            self._view = FULL
        _check_effects(spec_tool, output)
        minutes = output.minutes if output.minutes is not None else spec_tool.minutes
        if self._round_start is None:
            self._clock = round(self._clock + minutes, 6)
        else:
            # Calls of one round happen side by side: the round lasts as long as its longest.
            self._clock = round(max(self._clock, self._round_start + minutes), 6)
        self._tick += 1
        arg_dict = parsed.model_dump()
        # What the call did, from its effects and its tool's traits; a refused call did nothing.
        if output.ok:
            if spec_tool.changes_code and self._has_code_fault:
                # the world's reaction: the production traffic on the new code, never the
                # hidden checks (they run once, after the end)
                self._code_checks_fail = self._traffic_fails()
            if (op := output.operation) is not None:
                self._operations.append((tool, op.service, op.target))
            if (message := output.message) is not None:
                self._messages.append((self._tick, agent_id, message.to, message.text))
            if output.command is not None:
                self._terminal.append(
                    f"$ {tool} {output.command}".rstrip() + "  # " + output.text.partition("\n")[0]
                )
        if not spec_tool.read_only:
            self._telemetry.invalidate()
        cured, returned = self._update_faults()
        unneeded, hints = len(self._shaper.unneeded_operations), self._shaper.hints
        if output.ok and output.report is not None:
            self._report = output.report
            self._phase = EpisodePhase.TERMINATED
        elif self._tick >= self._instance.spec.step_budget:
            self._phase = EpisodePhase.TRUNCATED
        # Once the episode is over (and only then), the hidden checks judge the code: a cure
        # the traffic showed but the checks refuse did not hold.
        relapsed = self._relapsed() if self._phase is not EpisodePhase.RUNNING else ()
        components, credits = self._shaper.components(
            CallFacts(tool, output, cured, returned, agent_id, spec_tool.read_only, relapsed)
        )
        cost = UNNEEDED_OPERATION * (len(self._shaper.unneeded_operations) - unneeded) + sum(
            -hint_price(n) for n in range(hints + 1, self._shaper.hints + 1)
        )
        if cost:
            self._costs[agent_id] = round(self._costs.get(agent_id, 0.0) + cost, 9)
        final = None
        if self._phase is not EpisodePhase.RUNNING:
            final = self._grade = self.grade()
            components["grade"] = final.total
        total = round(sum(components.values()), 6)
        reward = RewardUpdate(
            agent_id=agent_id,
            tick=self._tick,
            components=MappingProxyType(components),
            total=total,
            others=MappingProxyType({a: MappingProxyType(c) for a, c in credits.items()}),
        )
        return StepResult(
            tick=self._tick,
            agent_id=agent_id,
            tool=tool,
            args=MappingProxyType(arg_dict),
            output=output,
            minutes=minutes,
            clock=self._clock,
            reward=reward,
            phase=self._phase,
            grade=final,
            costly=bool(cost),
        )

    def costs(self) -> dict[str, float]:
        """Each agent's own share of the grade's costs, as negative numbers (absent: none).

        Its unneeded operations and its hints at the price each was asked at; the penalty for
        code changed outside the root cause, split between the agents whose edits changed it.
        They add up to the grade's penalties, so a seat's costs can be charged to it alone.
        """
        out = dict(self._costs)
        root = self._instance.spec.ground_truth.service
        authors = sorted(
            {
                edit.author
                for edit in self._workspace.edits()
                if edit.path in self._workspace.changed_files()
                and self.service_of_path(edit.path) not in (None, root)
            }
        )
        for author in authors:
            share = SYMPTOM_CHANGE_PENALTY / len(authors)
            out[author] = round(out.get(author, 0.0) + share, 9)
        return out

    def drop_memos(self) -> None:
        """Forget everything memoised about the world, as if rebuilt from scratch to this point.

        Results never depend on it: tests prove it by comparing an episode that drops its memos
        before every call with one that keeps them, and benchmarks measure what the memos save.
        """
        self._telemetry, self._logs, self._alerts = self._readers(self._telemetry.version)
        self._board = None

    def begin_round(self) -> None:
        """Start a round of simultaneous calls (one per agent); see `end_round`.

        Until `end_round`, each call still applies in order, but the clock advances to the end of
        the longest call of the round rather than by the sum of their costs.
        """
        self._round_start = self._clock

    def end_round(self) -> None:
        """Close the current round; calls go back to taking their own time one after another."""
        self._round_start = None

    def grade(self) -> Grade:
        """The final grade once the episode is over; before, the grade the code would get now.

        It runs the hidden checks, so nothing that serves a running episode to its agents
        asks for it (the service shows `provisional_grade`); `metasre validate`, replay and
        counterfactual credit, which grade after the fact, do.
        """
        if self._grade is not None:
            return self._grade
        checks = self.code_checks()
        relapsed = set(self._relapsed(checks))
        telemetry = self._telemetry
        facts = self._facts(relapsed)
        if relapsed:
            # the world as it runs on from here: a cure that did not hold comes back, and the
            # state checks (a service healthy) see it
            faults = tuple(f.copy() for f in self._faults)
            for index in relapsed:
                faults[index].update(self._world, True, self._clock)
            spec, seed = self._instance.spec, self._instance.seed
            telemetry = Telemetry(spec, seed, self._world, faults, telemetry.version + 1)
            # the soak runs the world on from the relapsed faults too
            facts = replace(facts, faults=faults)
        return grade(
            self._instance.spec,
            checks,
            self._world,
            telemetry,
            facts,
            final=self._phase is not EpisodePhase.RUNNING,
        )

    def provisional_grade(self) -> Grade:
        """The grade as far as the world shows it now: no hidden check runs, none is named.

        The final grade once the episode is over.
        """
        if self._grade is not None:
            return self._grade
        return provisional(self._instance.spec, self._facts(set()))

    def _facts(self, relapsed: set[int]) -> EpisodeFacts:
        """How the episode went; the faults in `relapsed` count as not cured."""
        changed = frozenset(
            svc
            for p in self._workspace.changed_files()
            if (svc := self.service_of_path(p)) is not None
        )
        cured = [None if i in relapsed else f.cured_at() for i, f in enumerate(self._faults)]
        mitigated = None if any(c is None for c in cured) else max(c or 0.0 for c in cured)
        return EpisodeFacts(
            steps=self._tick,
            clock=self._clock,
            mitigated_at=mitigated,
            report=self._report,
            changed_services=changed,
            operations=tuple(self._operations),
            unneeded_operations=tuple(self._shaper.unneeded_operations),
            hints=self._shaper.hints,
            faults=self._faults,
        )

    def _relapsed(self, checks: Mapping[str, bool] | None = None) -> tuple[int, ...]:
        """Code faults the world shows cured whose cure the hidden checks refuse, by index.

        The traffic showed the errors stop, but the code still fails a FAIL_TO_PASS check and
        the bad code is still what runs (a rollback of the release would be a real cure).
        """
        if not self._has_code_fault or self._reference:
            return ()
        if checks is None:
            checks = self.code_checks()
        broken = not all(checks.get(i, False) for i in self._instance.spec.hidden.fail_to_pass)
        return tuple(
            i
            for i, f in enumerate(self._faults)
            if f.spec.kind == "code"
            and f.cured_at() is not None
            and f.wants_active(self._world, broken, self._clock)
        )

    def code_checks(self) -> dict[str, bool]:
        """Per hidden check id, whether the current code observes what the reference does.

        Judged on the trusted side by `HiddenChecks`; empty when the scenario has no code
        checks. Nothing of the checks (their text, inputs or expected values) is returned.
        """
        if self._reference:
            return {}
        return self._hidden.verdict(self._instance, self._runtime_files(), self._reference_files)

    def grading_cost(self, runner: ProbeRunner, runs: int = 3) -> float:
        """CPU seconds the hidden probes cost one grading of the current code.

        See `metasre.simulator.hidden.grading_cost`; ``runner`` must report its children's CPU.
        """
        return grading_cost(self._instance, self._runtime_files(), runner, runs)

    def guessable_checks(self) -> list[str]:
        """FAIL_TO_PASS checks a blind guess of code under test would pass (validate: none)."""
        return self._hidden.guessable_checks(self._instance, self._reference_files)

    def _reference_files(self) -> dict[str, bytes]:
        """The code of the reference world: this scenario and seed with its solution applied."""
        reference = Episode(self._instance, self._runner, self._hidden, self._traffic)
        reference._reference = True  # its own grading would ask for the reference again
        reference.play_steps(
            [s for s in self._instance.spec.solution if not get_tool(s.tool).ends_episode]
        )
        return reference._runtime_files()

    def observation(self) -> Observation:
        """The pager, budgets, alerts, dashboard and terminal as they are now."""
        spec = self._instance.spec
        alerts, rows = self._dashboard(self.minute)
        # Before the first call every episode of the instance sees the same: its opening.
        opening = self._instance.opening if self._tick == 0 else None
        if opening is not None and (found := opening.observation) is not None:
            return found
        recent = self._recent_deploys()
        if recent:
            rows = tuple(
                replace(r, recent_deploy=recent[r.name]) if r.name in recent else r for r in rows
            )
        # A fault's terminal lines show only while it is still visibly live.
        terminal = [
            t.text for f in self._faults if f.strength(self._clock) > 0.2 for t in f.spec.terminal
        ]
        terminal += self._terminal
        observation = Observation(
            scenario_id=spec.id,
            title=spec.title,
            severity=spec.severity,
            description=spec.description,
            minute=self._clock,
            sla_minutes_left=round(spec.sla_minutes - self._clock, 6),
            steps_left=self.steps_left,
            step_budget=spec.step_budget,
            phase=self._phase.value,
            alerts=alerts,
            services=rows,
            terminal=tuple(terminal[-TERMINAL_LINES:]),
        )
        if opening is not None:
            opening.observation = observation
        return observation

    # -- internals ------------------------------------------------------------------------------

    def _readers(self, version: int = 0) -> tuple[Telemetry, LogRenderer, AlertRules]:
        """Fresh telemetry, logs and alerts over the world and the faults as they are.

        `version`: how many changes the world and the faults have seen (0: none, the opening).
        """
        spec, seed = self._instance.spec, self._instance.seed
        telemetry = Telemetry(spec, seed, self._world, self._faults, version)
        logs = LogRenderer(
            spec, seed, self._start, self._world, self._faults, telemetry, self._served
        )
        return telemetry, logs, AlertRules(spec.alerts, telemetry)

    def _dashboard(self, minute: int) -> tuple[tuple[AlertView, ...], tuple[ServiceRow, ...]]:
        """The pager's alerts and the service rows (no deploy ages) at `minute`, memoised."""
        version = self._telemetry.version
        board = self._board
        if board is not None and board[0] == version and board[1] == minute:
            return board[2], board[3]
        # Every episode of a scenario and seed opens on the same dashboard (the world untouched,
        # minute 0), and finding when each alert's streak began reads far back: done once, kept
        # on the instance. Version 0: nothing has changed the world or a fault's course yet.
        opening = self._instance.opening if version == 0 and minute == 0 else None
        if opening is not None and (found := opening.board) is not None:
            self._alerts.recall(found[2])
            self._board = (version, minute, found[0], found[1])
            return found[0], found[1]
        alerts = tuple(
            AlertView(
                id=a.id,
                service=a.service,
                severity=a.severity,
                summary=a.summary,
                firing_minutes=minute - a.since_minute,
            )
            for a in self._alerts.firing(minute)
        )
        rows = []
        for name, svc in self._world.services.items():
            sig = self._telemetry.signals(name, minute)
            rows.append(
                ServiceRow(
                    name=name,
                    health=sig.health,
                    error_rate=sig.error_rate,
                    p99_ms=sig.p99_ms,
                    cpu=sig.cpu,
                    memory=sig.memory,
                    queue_depth=sig.queue_depth,
                    version=svc.version,
                    replicas=svc.replicas,
                    recent_deploy=None,
                    depends_on=svc.depends_on,
                )
            )
        board = self._board = (version, minute, alerts, tuple(rows))
        if opening is not None:
            opening.board = (alerts, board[3], self._alerts.memory())
        return alerts, board[3]

    def _recent_deploys(self) -> dict[str, str]:
        """Releases shipped in the last hour, by service, with their age (it moves every call)."""
        out = {}
        for name, svc in self._world.services.items():
            last = svc.releases[-1]
            if self._clock - last.at_minute <= 60:
                out[name] = f"{last.version} {self._clock - last.at_minute:.0f} min ago"
        return out

    def _runtime_files(self) -> dict[str, bytes]:
        """The code as the running platform has it: rolled-back migrations are not applied."""
        files = self._workspace.snapshot()
        for m in self._world.migrations:
            if not m.applied and m.file:
                files.pop(m.file, None)
        return files

    def _traffic_fails(self) -> bool:
        """Serve the production traffic on the current code; True while a request fails.

        Each request and its outcome goes into its service's log at this minute. Only the
        requests of a code fault's own service decide whether it lives on; another service's
        failing requests show in its log.
        """
        if self._reference:
            return True
        served = self._traffic.serve(self._instance, self._runtime_files(), self._reference_files)
        for s in served:
            self._served.append(
                ServedLine(self._clock, s.request.service, "INFO" if s.ok else "ERROR", s.log_line)
            )
        roots = {f.spec.service for f in self._faults if f.spec.kind == "code"}
        return any(not s.ok for s in served if s.request.service in roots) or not served

    def _update_faults(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(faults cured, faults brought back after a cure), by index, on this call."""
        cured: list[int] = []
        returned: list[int] = []
        for index, fault in enumerate(self._faults):
            was_cured = fault.cured_at() is not None
            transition = fault.update(self._world, self._code_checks_fail, self._clock)
            if transition is not None:
                self._telemetry.invalidate()
            if transition == "off":
                cured.append(index)
            elif transition == "on" and was_cured:
                returned.append(index)
        return tuple(cured), tuple(returned)


__all__ = [
    "TERMINAL_LINES",
    "Episode",
    "EpisodePhase",
    "StepResult",
    "StepTarget",
    "play_steps",
]
