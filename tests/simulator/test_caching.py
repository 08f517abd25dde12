"""Memos change nothing: an episode reads the same with them as recomputed from scratch.

`Episode.drop_memos` replaces everything memoised from the world (signal values, log minutes,
alert streaks, the dashboard) with fresh, empty readers, so an episode that drops them before
every call computes each answer afresh; it must match, byte for byte, the same calls on an
episode that keeps its memos (and must forget them, through `Telemetry.invalidate`, exactly when
the world or a fault changes).
"""

import random
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest

from metasre.conformance.validate import play_steps
from metasre.simulator import Episode, Observation, StepResult, resolve, sandbox, scenario_ids
from metasre.simulator import episode as episode_module
from metasre.simulator import logs as logs_module
from metasre.simulator import telemetry as telemetry_module
from metasre.simulator.alerts import AlertRules
from metasre.simulator.logs import LEVELS, LogLine
from metasre.simulator.lru import Lru
from metasre.simulator.observation import Opening
from metasre.simulator.report import normalize_location
from metasre.simulator.sandbox import RunReport, SandboxLimits, default_runner
from metasre.simulator.scenarios import loader
from metasre.simulator.scenarios.spec import METRICS, SolutionStep
from metasre.simulator.telemetry import Telemetry
from metasre.simulator.vfs import Workspace

Call = tuple[str, dict[str, Any]]


class _SameReports:
    """A runner that answers the same files and tests with the same report, first one wins.

    The sandbox is not under test here: a run that fails once for a reason of its own (a busy
    machine, a timeout) must not make the two plays differ.
    """

    def __init__(self) -> None:
        self._inner = default_runner()
        self._reports: dict[Any, RunReport] = {}

    def run(
        self,
        files: Mapping[str, bytes],
        test_files: Sequence[str],
        *,
        limits: SandboxLimits | None = None,
        shared: Collection[str] = (),
    ) -> RunReport:
        key = (tuple(sorted(files.items())), tuple(test_files), limits)
        if key not in self._reports:
            self._reports[key] = self._inner.run(files, test_files, limits=limits, shared=shared)
        return self._reports[key]


def _reads(ep: Episode) -> list[Call]:
    """Cheap calls over every memoised path: windows, filters, alerts, dashboard, files."""
    truth = ep.instance.spec.ground_truth
    root = truth.service
    other = next(s for s in sorted(ep.world.services) if s != root)
    location = normalize_location(truth.location)
    code = [p for p in ep.workspace.walk() if p.endswith(".py") and not p.startswith("tests/")]
    return [
        ("read_logs", {"service": root}),
        ("get_alerts", {}),
        ("get_alerts", {}),  # the same minute, most likely
        ("read_logs", {"service": other, "level": "WARN"}),
        ("query_metrics", {"service": root, "metric": "error_rate", "window_minutes": 240}),
        # CPU depends on the replicas now, at every minute: a scale rewrites its history.
        ("query_metrics", {"service": root, "metric": "cpu", "window_minutes": 240}),
        ("read_logs", {"service": root, "since_minutes": 240, "lines": 500}),
        ("check_dependencies", {}),
        ("read_logs", {"service": root, "contains": "e", "lines": 7}),
        ("describe_service", {"service": root}),
        ("view_file", {"path": location if location in code else code[0]}),
        ("read_logs", {"service": root, "level": "ERROR", "since_minutes": 5}),
    ]


class _Player:
    """Plays calls on one episode and records every result and the observation after it.

    It stands in for the episode in `play_steps`, which resolves a solution step's `find`.
    """

    def __init__(
        self,
        scenario_id: str,
        seed: int,
        runner: sandbox.TestRunner,
        *,
        memo: bool,
        opening: Any = None,
    ) -> None:
        instance = resolve(scenario_id).instance(seed)
        if opening is not None:  # what the episode opens on, in place of the instance's own
            instance = replace(instance, opening=opening)
        self.episode = Episode(instance, runner)
        self.memo = memo
        self.transcript: list[tuple[StepResult, Observation, str]] = []
        self._reads = _reads(self.episode)
        self._next = 0

    @property
    def workspace(self) -> Workspace:
        return self.episode.workspace

    def apply(self, agent: str, tool: str, args: dict[str, Any] | None = None) -> StepResult:
        if not self.memo:
            self.episode.drop_memos()
        step = self.episode.apply(agent, tool, args)
        if not self.memo:
            self.episode.drop_memos()
        obs = self.episode.observation()
        self.transcript.append((step, obs, obs.render()))
        return step

    def read_around(self, step: SolutionStep) -> None:
        """Read the log a step changes, so its minute is memoised when the step lands."""
        service = step.args.get("service") or self.episode.instance.spec.ground_truth.service
        self.apply("reader", "read_logs", {"service": service, "lines": 500})

    def read(self, count: int) -> None:
        for _ in range(count):
            tool, args = self._reads[self._next % len(self._reads)]
            self._next += 1
            self.apply("reader", tool, args)


def _play(
    scenario_id: str, seed: int, runner: sandbox.TestRunner, *, memo: bool, opening: Any
) -> _Player:
    """Reads, the plausible wrong operations, more reads, the fix, reads to the budget, report."""
    player = _Player(scenario_id, seed, runner, memo=memo, opening=opening)
    spec = player.episode.instance.spec
    player.read(5)
    # Edits of the wrong fix could move the lines the solution's edit looks for.
    wrong = [s for s in spec.wrong_fix if s.tool not in ("submit_report", "edit_lines")]
    fix = [s for s in spec.solution if s.tool != "submit_report"]
    report = [s for s in spec.solution if s.tool == "submit_report"]
    for step in (*wrong, *fix):
        player.read_around(step)
        # In a round the step lands at the clock a longer call already reached, so the pager
        # is asked twice at one minute, before and after the world changes.
        player.episode.begin_round()
        player.apply("watcher", "run_tests", {"suite": "load"})
        play_steps(player, [step])  # type: ignore[arg-type]
        player.episode.end_round()
        player.read_around(step)
        player.read(2)
    player.read(player.episode.steps_left - 1)
    play_steps(player, report)  # type: ignore[arg-type]
    assert player.episode.phase.value == "terminated"
    return player


class _Forgetful:
    """An opening that never remembers: every episode computes its opening itself."""

    board = property(lambda self: None, lambda self, value: None)
    observation = property(lambda self: None, lambda self, value: None)


class _Counting:
    """An opening that remembers, and counts how often an episode finds each part filled."""

    def __init__(self) -> None:
        self.kept = Opening()
        self.hits = {"board": 0, "observation": 0}

    def _found(self, name: str) -> Any:
        found = getattr(self.kept, name)
        self.hits[name] += found is not None
        return found

    board = property(
        lambda self: self._found("board"), lambda self, v: setattr(self.kept, "board", v)
    )
    observation = property(
        lambda self: self._found("observation"),
        lambda self, v: setattr(self.kept, "observation", v),
    )


def _opening_on(scenario_id: str, seed: int, opening: Any) -> Episode:
    return Episode(replace(resolve(scenario_id).instance(seed), opening=opening))


@pytest.mark.parametrize("scenario_id", scenario_ids())
def test_memos_change_no_output_and_no_observation(scenario_id):
    runner = _SameReports()
    opening = _Counting()
    first = _opening_on(scenario_id, 1, opening).observation()  # the opening is remembered
    memo = _play(scenario_id, 1, runner, memo=True, opening=opening)
    assert opening.hits["board"] >= 1  # the memo play opened on the remembered dashboard
    assert _opening_on(scenario_id, 1, opening).observation() == first
    assert opening.hits["observation"] >= 1
    # computed again, the same
    assert _opening_on(scenario_id, 1, _Forgetful()).observation() == first
    fresh = _play(scenario_id, 1, runner, memo=False, opening=_Forgetful())
    assert len(memo.transcript) == len(fresh.transcript) == memo.episode.tick
    for (step, obs, text), (step0, obs0, text0) in zip(
        memo.transcript, fresh.transcript, strict=True
    ):
        where = f"call {step.tick} {step.tool} {dict(step.args)}"
        assert step.output == step0.output, where
        assert step == step0, where
        assert obs == obs0, where
        assert text == text0, where
    # The play changed the world (the fix, at least), so the memos were dropped on the way.
    assert memo.episode.telemetry.version > 0
    assert memo.episode.grade() == fresh.episode.grade()


def test_the_opening_is_rendered_once_per_seed_and_shared_as_a_value(monkeypatch):
    scenario_id, seed = scenario_ids()[0], 5
    # Forget what earlier tests in this process left on the instance, then count renders.
    kept = resolve(scenario_id).instance(seed).opening
    kept.board = kept.observation = None
    renders: list[int] = []
    real = episode_module.Observation

    def counting(**fields: Any) -> Observation:
        renders.append(fields["steps_left"])
        return real(**fields)

    monkeypatch.setattr(episode_module, "Observation", counting)
    openings = [Episode.make(scenario_id, seed).observation() for _ in range(3)]
    assert len(renders) == 1 and openings == [openings[0]] * 3
    other = Episode.make(scenario_id, seed + 1).observation()
    assert other != openings[0]  # another seed opens on its own
    # Sharing the opening shares nothing an episode changes: one plays on, the next opens anew.
    played = Episode.make(scenario_id, seed)
    played.apply("a", "get_alerts", {})
    assert played.observation() != openings[0]
    assert Episode.make(scenario_id, seed).observation() == openings[0]


def test_an_opening_is_kept_with_its_rendering_and_goes_with_it(monkeypatch):
    monkeypatch.setattr(loader, "_BUILT", Lru(1))
    # A plain family: a mix's folder holds no variants of its own (its causes' folders do).
    entry = next(e for e in map(resolve, scenario_ids()) if e.mix is None)
    assert loader._drawn(entry.folder, 1)[1] != loader._drawn(entry.folder, 2)[1]
    opening = Episode(entry.instance(1)).observation()
    kept = entry.rendered_instance(1)
    assert kept is not None and kept.opening.observation == opening
    entry.instance(2)  # another rendering: the cache holds one, so seed 1's goes, opening and all
    assert entry.rendered_instance(1) is None
    assert Episode(entry.instance(1)).observation() == opening  # rendered again, the same


def _fresh_firing(ep: Episode, minute: int) -> tuple[Any, ...]:
    return AlertRules(ep.instance.spec.alerts, ep.telemetry).firing(minute)


@pytest.mark.parametrize(
    "scenario_id",
    [s for s in scenario_ids() if resolve(s).instance(0).spec.alerts],
)
def test_alert_streaks_remembered_across_minutes_match_a_fresh_walk(scenario_id):
    ep = Episode.make(scenario_id, 2)
    spec = ep.instance.spec
    # The operations of the wrong fix and the fix, between probes: each rewrites history.
    operations = [
        s
        for s in (*spec.wrong_fix, *spec.solution)
        if s.tool not in ("edit_lines", "run_tests", "submit_report")
    ]
    # Forward by ones and by jumps (past the look-back too), and back again.
    minutes = [0, 1, 2, 3, 5, 12, 13, 40, 41, 230, 231, 500, 7, 8, -50, -49, 60, 61]
    for n, minute in enumerate(minutes):
        if n % 6 == 5 and operations:
            step = operations.pop(0)
            ep.apply("operator", step.tool, dict(step.args))
        assert ep.alerts.firing(minute) == _fresh_firing(ep, minute), minute
    # A streak longer than the look-back is capped at it, whichever way it was reached.
    assert all(500 - a.since_minute <= 180 for a in ep.alerts.firing(500))


def _keep(level: str | None, contains: str | None) -> Callable[[LogLine], bool] | None:
    if level is None and contains is None:
        return None
    floor = LEVELS.index(level or "DEBUG")
    return lambda ln: LEVELS.index(ln.level) >= floor and (contains or "") in ln.text


@pytest.mark.parametrize("budget", [10_000, 25, 0])
def test_a_log_tail_is_the_end_of_the_filtered_window_whatever_the_memo_holds(budget, monkeypatch):
    monkeypatch.setattr(logs_module, "_MEMO_LINES", budget)
    ep = Episode.make("meta-sre/db-connection-leak-v2", 0)
    logs = ep.logs
    for service in sorted(ep.world.services):
        for first, last in ((-29, 0), (-239, 3), (5, 5), (-3, 12)):
            whole = logs.lines(service, first, last)
            for count in (1, 40, 500):
                for level, contains in ((None, None), ("ERROR", None), (None, "e"), ("WARN", "o")):
                    keep = _keep(level, contains)
                    wanted = [ln for ln in whole if keep is None or keep(ln)][-count:]
                    assert logs.tail(service, first, last, count, keep) == wanted
    # Lines are in time order, whole minutes from the memo joined end to end.
    lines = logs.lines("postgres", -60, 0)
    assert lines == sorted(lines, key=lambda ln: (ln.minute, ln.second))


@pytest.mark.parametrize("slots", [4096, 40])
def test_memoised_signal_values_match_fresh_ones_in_any_order(slots, monkeypatch):
    monkeypatch.setattr(telemetry_module, "_SLOTS", slots)
    ep = Episode.make("meta-sre/auth-traffic-spike-v2", 0)
    spec = ep.instance.spec
    rng = random.Random(7)
    # A few signals, so that most probes land on a memoised row.
    signals = [(s.name, m) for s in spec.services[:2] for m in METRICS[:2]]
    # Runs forward and back, far jumps (past the growth limit) and repeats, across a change.
    minutes = [rng.randint(-300, 300) for _ in range(400)] + list(range(-40, 40)) * 2
    minutes += [5_000, -5_000, 4_999, 0]
    for n, minute in enumerate(minutes):
        if n == 200:
            ep.apply(
                "operator", "scale_service", {"service": spec.ground_truth.service, "replicas": 9}
            )
        service, metric = rng.choice(signals)
        fresh = Telemetry(spec, ep.instance.seed, ep.world, ep.faults)
        assert ep.telemetry.value(service, metric, minute) == fresh.value(service, metric, minute)
