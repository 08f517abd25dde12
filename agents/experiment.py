"""Experiments: a grid of teams, turn policies and reward settings, and its statistics.

An experiment file declares the grid; each cell (a `Configuration`) is played over families
and seeds, and its figures are estimated over instances (family, seed) with seeded bootstrap
confidence intervals. `metasre experiment` runs a file and prints the comparison; a notebook
can run the cells with `run_rollout` and summarise them the same way.
"""

from __future__ import annotations

import itertools
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .players import make_player
from .rollout import EpisodePlayer, EpisodeResult
from .seeds import parse_seeds
from .sync import SyncClient
from .teamwork import EpisodeTeamwork

TurnPolicy = Literal["FREE_FOR_ALL", "ROUND_ROBIN", "SIMULTANEOUS"]
Attribution = Literal["SHARED", "INDIVIDUAL", "MIXED", "DIFFERENCE"]
RewardMode = Literal["DENSE", "SPARSE"]
BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TeamSpec(_Strict):
    """One team composition of the grid."""

    name: str = Field(min_length=1, max_length=40)
    agents: str = Field(
        pattern=r"^(expert|team|random|expert\+(saboteur|rider)"
        r"|expert@([a-z][a-z0-9_-]{0,63}|[1-9]))$"
    )
    """expert: the scripted expert alone on one seat (the full view); expert@ROLE: the expert
    alone in the seat of one of the scenario's roles, with that role's view (ROLE: a role
    name, or its position from 1, since families name their roles differently); team: the
    scripted team (a seat per scenario role, or commander, investigator and fixer when the
    scenario declares none); random: the random agent alone; expert+saboteur, expert+rider:
    the expert in seat "worker" beside a companion that wants credit it did not earn
    (`metasre.agents.policies.companions`)."""


class ExperimentFile(_Strict):
    """The grid an experiment file declares (TOML)."""

    name: str = Field(min_length=1, max_length=80)
    families: list[str] = Field(min_length=1)
    """Family ids or names."""
    seeds: list[int] = Field(min_length=1)
    """A seed list like the command line's ("0-9", "1,5,9") or a TOML list of integers."""
    split: Literal["train", "test"] | None = None
    """Play only each family's seeds (of `seeds`) in this split; 'test' for a result to report
    (a symptom-first family's test structures never occur in its training seeds)."""
    repetitions: int = Field(1, ge=1, le=100)
    """Episodes per (configuration, family, seed); the scripted agents are deterministic, so
    more than one measures the server's interleavings, not the agents."""
    teams: list[TeamSpec] = Field(min_length=1)
    turn_policies: list[TurnPolicy] = Field(["FREE_FOR_ALL"], min_length=1)
    attributions: list[Attribution] = Field(["SHARED"], min_length=1)
    reward_modes: list[RewardMode] = Field(["DENSE"], min_length=1)
    parallel: int = Field(4, ge=1, le=256)
    turn_timeout_seconds: float = Field(1.0, gt=0, le=600)
    """How long a ROUND_ROBIN turn or SIMULTANEOUS round waits for a seat that does not call
    (real seconds; the simulated clock does not move while it waits)."""

    @field_validator("seeds", mode="before")
    @classmethod
    def _seed_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_seeds(value)
        return value

    @field_validator("teams")
    @classmethod
    def _unique_teams(cls, value: list[TeamSpec]) -> list[TeamSpec]:
        names = [t.name for t in value]
        if len(set(names)) != len(names):
            raise ValueError(f"team names must differ: {names}")
        return value


@dataclass(frozen=True, slots=True)
class Configuration:
    """One cell of the grid: who plays, under which turn policy and reward settings."""

    team: TeamSpec
    turn_policy: str
    attribution: str
    reward_mode: str
    turn_timeout_seconds: float = 1.0

    @property
    def label(self) -> str:
        """A short name for tables."""
        return f"{self.team.name} | {self.turn_policy} | {self.attribution} | {self.reward_mode}"

    def player(self, client: SyncClient) -> EpisodePlayer:
        """The episode player for this cell."""
        options: dict[str, Any] = {
            "turn_policy": self.turn_policy,
            "attribution": self.attribution,
            "reward_mode": self.reward_mode,
            "turn_timeout_seconds": self.turn_timeout_seconds,
        }
        worker, plus, companion = self.team.agents.partition("+")
        if plus:
            from .policies import ExpertPolicy
            from .policies.companions import COMPANIONS
            from .rollout import pair_player

            assert worker == "expert", self.team.agents  # the pattern allows no other
            return pair_player(
                lambda seed: ExpertPolicy(), companion, COMPANIONS[companion], **options
            )
        agent, _, role = self.team.agents.partition("@")
        if role:
            from .policies import ExpertPolicy
            from .team_session import role_player

            return role_player(lambda seed: ExpertPolicy(), role, **options)
        return make_player(agent, client, **options)


def configurations(spec: ExperimentFile) -> list[Configuration]:
    """Every cell of the grid, teams outermost."""
    return [
        Configuration(t, p, a, r, spec.turn_timeout_seconds)
        for t, p, a, r in itertools.product(
            spec.teams, spec.turn_policies, spec.attributions, spec.reward_modes
        )
    ]


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean over seeds and its bootstrap confidence interval."""

    mean: float
    low: float
    high: float
    seeds: int

    def text(self, digits: int = 2) -> str:
        """`0.93 [0.88, 0.97]`."""

        def shown(value: float) -> str:
            # round first, so a tiny negative mean prints as 0.00, not -0.00
            return f"{round(value, digits) + 0.0:.{digits}f}"

        return f"{shown(self.mean)} [{shown(self.low)}, {shown(self.high)}]"


def over_instances(
    by_seed: Mapping[tuple[str, int], Sequence[float]], *, salt: str = ""
) -> Estimate | None:
    """Mean of the per-instance means, with a percentile bootstrap over instances.

    An instance (family, seed) is the unit: repetitions of one are averaged first, so a
    confidence interval says how the figure would move on other incidents, not on replays of
    the same ones. The resampling is seeded, so a rerun prints the same interval.
    """
    means = [statistics.fmean(v) for _, v in sorted(by_seed.items()) if v]
    if not means:
        return None
    rng = random.Random(f"experiment-bootstrap:{salt}")
    boots = sorted(
        statistics.fmean(rng.choices(means, k=len(means))) for _ in range(BOOTSTRAP_RESAMPLES)
    )
    tail = (1 - CONFIDENCE) / 2
    return Estimate(
        statistics.fmean(means),
        boots[int(tail * (len(boots) - 1))],
        boots[int((1 - tail) * (len(boots) - 1))],
        len(means),
    )


METRICS: dict[str, Callable[[EpisodeTeamwork], float | None]] = {
    "grade": lambda t: t.grade,
    "resolved": lambda t: float(t.resolved),
    "sla_met": lambda t: float(t.sla_met),
    "mitigation_minutes": lambda t: t.mitigated_at,
    "steps": lambda t: float(t.steps),
    "messages_sent": lambda t: float(t.messages_sent),
    "messages_received": lambda t: float(t.messages_received),
    "redundant_looks": lambda t: float(t.redundant_looks),
    "idle_turns": lambda t: float(t.idle_turns),
}
"""The figures compared per configuration; mitigation_minutes over mitigated episodes only."""
FAMILY_METRICS = ("sla_met", "grade", "resolved", "mitigation_minutes")
"""The figures also given family by family (families differ in SLA and in who can solve them)."""


@dataclass(frozen=True, slots=True)
class ConfigurationResult:
    """One configuration's episodes and its figures."""

    configuration: Configuration
    episodes: int
    failed: int
    """Episodes that could not be played or graded."""
    figures: Mapping[str, Estimate | None]
    credit: Mapping[str, Estimate | None]
    """Per seat: its reward under the configuration's attribution, over the instances that seat
    it (its `seeds`: a role exists only in some families)."""
    rows: Sequence[Mapping[str, Any]]
    by_family: Mapping[str, Mapping[str, Estimate | None]] = field(default_factory=dict)
    """Per family: the `FAMILY_METRICS` over its seeds alone."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the results file."""
        c = self.configuration
        return {
            "team": c.team.name,
            "agents": c.team.agents,
            "turn_policy": c.turn_policy,
            "attribution": c.attribution,
            "reward_mode": c.reward_mode,
            "episodes": self.episodes,
            "failed": self.failed,
            "figures": {k: asdict(v) if v else None for k, v in self.figures.items()},
            "credit": {k: asdict(v) if v else None for k, v in self.credit.items()},
            "by_family": {
                family: {k: asdict(v) if v else None for k, v in figures.items()}
                for family, figures in self.by_family.items()
            },
            "episodes_detail": list(self.rows),
        }


def summarize_configuration(
    configuration: Configuration, results: Sequence[EpisodeResult]
) -> ConfigurationResult:
    """The figures of one configuration's episodes, estimated over seeds."""
    played = [(r, r.details) for r in results if isinstance(r.details, EpisodeTeamwork)]
    figures: dict[str, Estimate | None] = {}
    for name, read in METRICS.items():
        values = [(r, read(t)) for r, t in played]
        figures[name] = over_instances(
            _by_instance([(r, v) for r, v in values if v is not None]),
            salt=f"{configuration.label}:{name}",
        )
    seats = sorted({s for _, t in played for s in t.credit})
    credit = {
        # Over the episodes that seat the role: a family without it says nothing of its credit
        # (counting it as 0 there halved a role's credit on a mixed grid; issue 28).
        seat: over_instances(
            _by_instance([(r, t.credit[seat]) for r, t in played if seat in t.credit]),
            salt=f"{configuration.label}:credit:{seat}",
        )
        for seat in seats
    }
    rows = [
        {
            "family": r.scenario_id,
            "seed": r.seed,
            "session_id": r.session_id,
            "error": r.error,
            **(asdict(r.details) if isinstance(r.details, EpisodeTeamwork) else {}),
        }
        for r in results
    ]
    by_family = {
        family: {
            name: over_instances(
                _by_instance(
                    [
                        (r, v)
                        for r, t in played
                        if r.scenario_id == family and (v := METRICS[name](t)) is not None
                    ]
                ),
                salt=f"{configuration.label}:{family}:{name}",
            )
            for name in FAMILY_METRICS
        }
        for family in dict.fromkeys(r.scenario_id for r in results)
    }
    return ConfigurationResult(
        configuration,
        len(results),
        sum(1 for r in results if not r.graded or not isinstance(r.details, EpisodeTeamwork)),
        figures,
        credit,
        rows,
        by_family,
    )


def _by_instance(
    pairs: Sequence[tuple[EpisodeResult, float]],
) -> dict[tuple[str, int], list[float]]:
    out: dict[tuple[str, int], list[float]] = {}
    for r, value in pairs:
        out.setdefault((r.scenario_id, r.seed), []).append(value)
    return out


__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "CONFIDENCE",
    "FAMILY_METRICS",
    "METRICS",
    "Attribution",
    "Configuration",
    "ConfigurationResult",
    "Estimate",
    "ExperimentFile",
    "RewardMode",
    "TeamSpec",
    "TurnPolicy",
    "configurations",
    "over_instances",
    "summarize_configuration",
]
