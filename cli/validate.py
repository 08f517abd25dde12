"""`metasre validate`: proves each scenario is a fair incident, seed by seed."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from metasre.agents.policies import PROBES, ExpertPolicy, RandomPolicy
from metasre.cli.inprocess import EpisodeCaller
from metasre.simulator import Episode
from metasre.simulator.sandbox import TestRunner

EXPERT_MIN = 0.9
RANDOM_MAX_MEAN = 0.2
PROBE_MAX = 0.2


@dataclass(slots=True)
class ScenarioVerdict:
    """The measured figures and any failures for one scenario."""

    scenario_id: str
    seeds: list[int]
    reference: list[float] = field(default_factory=list)
    expert: list[float] = field(default_factory=list)
    random: list[float] = field(default_factory=list)
    probes: dict[str, list[float]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No check failed."""
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        """Plain data for --json."""
        return {
            "scenario_id": self.scenario_id, "ok": self.ok, "seeds": self.seeds,
            "reference_min": min(self.reference, default=0.0),
            "expert_min": min(self.expert, default=0.0),
            "expert_mean": statistics.fmean(self.expert) if self.expert else 0.0,
            "random_mean": statistics.fmean(self.random) if self.random else 0.0,
            "probes_max": {k: max(v) for k, v in self.probes.items()},
            "failures": self.failures,
        }


def play_reference(episode: Episode) -> None:
    """Apply a scenario's reference solution, resolving `find` into line numbers."""
    for step in episode.instance.spec.solution:
        args = dict(step.args)
        needle = args.pop("find", None)
        if needle is not None:
            line = episode.workspace.find_line(str(args["path"]), str(needle))
            if line is None:
                raise ValueError(f"reference solution: {needle!r} not found in {args['path']}")
            args.setdefault("start_line", line)
            if args.get("action") != "insert":
                args.setdefault("end_line", line)
        episode.apply("reference", step.tool, args)


def check_start(episode: Episode) -> list[str]:
    """The incident's start must fail every FAIL_TO_PASS check and pass every PASS_TO_PASS."""
    problems = []
    grade = episode.grade()
    for check, passed in grade.fail_to_pass.items():
        if passed:
            problems.append(f"FAIL_TO_PASS {check} already passes at the start")
    for check, passed in grade.pass_to_pass.items():
        if not passed:
            problems.append(f"PASS_TO_PASS {check} fails at the start")
    return problems


def validate_scenario(
    scenario_id: str, seeds: Sequence[int], random_seeds: int, runner: TestRunner | None = None
) -> ScenarioVerdict:
    """Run every check of one scenario."""
    verdict = ScenarioVerdict(scenario_id, list(seeds))
    for seed in seeds:
        start = Episode.make(scenario_id, seed, runner)
        verdict.failures += [f"seed {seed}: {p}" for p in check_start(start)]

        ref = Episode.make(scenario_id, seed, runner)
        try:
            play_reference(ref)
        except Exception as exc:
            verdict.failures.append(f"seed {seed}: reference solution broke: {exc}")
            continue
        g = ref.grade()
        verdict.reference.append(g.total)
        if not g.resolved:
            failing = [c for c, ok in {**g.fail_to_pass, **g.pass_to_pass}.items() if not ok]
            verdict.failures.append(f"seed {seed}: reference solution leaves {failing} failing")

        ep = Episode.make(scenario_id, seed, runner)
        ExpertPolicy().play(EpisodeCaller(ep), ep.observation().to_dict())
        g = ep.grade()
        verdict.expert.append(g.total)
        if g.total < EXPERT_MIN:
            parts = ", ".join(f"{c.name}={c.value:.2f}" for c in g.components)
            verdict.failures.append(f"seed {seed}: expert graded {g.total:.3f} < {EXPERT_MIN} "
                                    f"({parts})")

        for name, probe in PROBES.items():
            ep = Episode.make(scenario_id, seed, runner)
            probe(EpisodeCaller(ep, f"probe-{name}"), ep.observation().to_dict())
            total = ep.grade().total
            verdict.probes.setdefault(name, []).append(total)
            if total > PROBE_MAX:
                verdict.failures.append(f"seed {seed}: probe {name} graded {total:.3f} > {PROBE_MAX}")

    for seed in range(random_seeds):
        ep = Episode.make(scenario_id, seed, runner)
        RandomPolicy(seed).play(EpisodeCaller(ep, "random"), ep.observation().to_dict())
        verdict.random.append(ep.grade().total)
    if verdict.random and statistics.fmean(verdict.random) > RANDOM_MAX_MEAN:
        verdict.failures.append(
            f"random agent mean {statistics.fmean(verdict.random):.3f} > {RANDOM_MAX_MEAN}")
    return verdict
