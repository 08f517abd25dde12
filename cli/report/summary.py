"""The report's figures over episodes: per configuration, per family, pass@k and pass^k.

Every mean is over instances (family, seed) with a percentile bootstrap over them, as
`metasre experiment` computes it: repetitions of an instance are averaged first, so an interval
says how a figure would move on other incidents, not on replays of the same ones.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ...agents.experiment import CONFIDENCE, Estimate
from .episodes import EpisodeRow

RESAMPLES = 1000
"""Bootstrap resamples per figure: a thousand keep the report of 1,000 episodes within seconds
(`metasre experiment` draws 2,000 for a printed table)."""

METRICS: dict[str, tuple[str, Callable[[EpisodeRow], float | None]]] = {
    "resolved": ("resolved", lambda r: float(r.resolved)),
    "grade": ("grade", lambda r: r.grade),
    "resolved_test": ("resolved, test split", lambda r: _test(r, float(r.resolved))),
    "grade_test": ("grade, test split", lambda r: _test(r, r.grade)),
    "sla_met": ("SLA met", lambda r: float(r.sla_met)),
    "penalty": ("penalties", lambda r: r.penalty),
    "steps": ("steps", lambda r: float(r.steps)),
    "minutes": ("simulated minutes", lambda r: r.minutes),
    "mitigation": ("mitigated at (min)", lambda r: r.mitigated_at),
}
"""(shown name, reading) of each summary figure; None readings are left out."""


def _test(row: EpisodeRow, value: float) -> float | None:
    return value if row.split == "test" else None


TEAM_METRICS: dict[str, tuple[str, Callable[[EpisodeRow], float | None]]] = {
    "messages": ("messages", lambda r: float(r.messages)),
    "redundant_looks": ("redundant looks", lambda r: float(r.redundant_looks)),
    "idle_rounds": ("idle rounds", lambda r: None if r.idle_rounds is None else r.idle_rounds),
}
"""The collaboration figures of multi-seat configurations."""


class Bootstrap:
    """Seeded percentile bootstrap over instances, one set of resamples per configuration.

    Every figure of a configuration is resampled with the same draws of instances (a paired
    bootstrap), drawn once: drawing is most of the cost, and a report of a thousand episodes
    must build in seconds.
    """

    def __init__(self, salt: str) -> None:
        self._salt = salt
        self._draws: dict[int, list[list[int]]] = {}

    def _indices(self, n: int) -> list[list[int]]:
        draws = self._draws.get(n)
        if draws is None:
            rng = random.Random(f"report-bootstrap:{self._salt}:{n}")
            population = range(n)
            draws = self._draws[n] = [rng.choices(population, k=n) for _ in range(RESAMPLES)]
        return draws

    def __call__(self, values: Mapping[tuple[str, int], Sequence[float]]) -> Estimate | None:
        """Mean of the per-instance means and its 95% interval; None with no instance."""
        means = [statistics.fmean(v) for _, v in sorted(values.items()) if v]
        if not means:
            return None
        n = len(means)
        boots = sorted(sum(map(means.__getitem__, draw)) / n for draw in self._indices(n))
        tail = (1 - CONFIDENCE) / 2
        return Estimate(
            statistics.fmean(means),
            boots[int(tail * (RESAMPLES - 1))],
            boots[int((1 - tail) * (RESAMPLES - 1))],
            n,
        )


def by_instance(
    rows: Sequence[EpisodeRow], read: Callable[[EpisodeRow], float | None]
) -> dict[tuple[str, int], list[float]]:
    """Each instance's readings (None readings left out)."""
    out: dict[tuple[str, int], list[float]] = {}
    for r in rows:
        value = read(r)
        if value is not None:
            out.setdefault((r.family, r.seed), []).append(value)
    return out


@dataclass(frozen=True, slots=True)
class ConfigSummary:
    """One configuration's figures."""

    config: str
    runs: tuple[str, ...]
    episodes: int
    instances: int
    test_instances: int
    """Instances on the test split (`metasre.simulator.scenarios.splits`)."""
    families: int
    figures: Mapping[str, Estimate | None]
    components: Mapping[str, Estimate | None]
    """Each grade component's mean score."""
    team: bool
    credit: Mapping[str, Estimate | None]
    """Each seat's credit under `attribution`."""
    attribution: str
    teamwork: Mapping[str, Estimate | None]
    pass_at: Mapping[int, float]
    """pass@k: the chance that at least one of k tries resolves, over instances with k+ tries."""
    pass_hat: Mapping[int, float]
    """pass^k: the chance that all of k tries resolve (tau-bench's reliability figure)."""


def summarize(config: str, rows: Sequence[EpisodeRow]) -> ConfigSummary:
    """The figures of one configuration's episodes."""
    bootstrap = Bootstrap(config)
    figures = {name: bootstrap(by_instance(rows, read)) for name, (_, read) in METRICS.items()}
    names = list(dict.fromkeys(n for r in rows for n in r.components))
    components = {n: bootstrap(by_instance(rows, _component(n))) for n in names}
    team = any(r.team for r in rows)
    seats = list(dict.fromkeys(s for r in rows for s in r.seats))
    credit = {s: bootstrap(by_instance(rows, _credit(s))) for s in seats} if team else {}
    teamwork = (
        {n: bootstrap(by_instance(rows, read)) for n, (_, read) in TEAM_METRICS.items()}
        if team
        else {}
    )
    tries = by_instance(rows, lambda r: float(r.resolved))
    most = max((len(v) for v in tries.values()), default=0)
    return ConfigSummary(
        config=config,
        runs=tuple(dict.fromkeys(r.run for r in rows)),
        episodes=len(rows),
        instances=len(tries),
        test_instances=len({(r.family, r.seed) for r in rows if r.split == "test"}),
        families=len({r.family for r in rows}),
        figures=figures,
        components=components,
        team=team,
        credit=credit,
        attribution=", ".join(dict.fromkeys(r.attribution for r in rows)),
        teamwork=teamwork,
        pass_at={
            k: v for k in range(1, most + 1) if (v := pass_k(tries, k, every=False)) is not None
        },
        pass_hat={
            k: v for k in range(1, most + 1) if (v := pass_k(tries, k, every=True)) is not None
        },
    )


def _component(name: str) -> Callable[[EpisodeRow], float | None]:
    return lambda r: r.components.get(name)


def _credit(seat: str) -> Callable[[EpisodeRow], float | None]:
    return lambda r: r.credit.get(seat)


def pass_k(
    tries: Mapping[tuple[str, int], Sequence[float]], k: int, *, every: bool
) -> float | None:
    """pass@k (`every=False`) or pass^k (`every=True`), unbiased, over instances with k+ tries.

    With n tries of an instance of which c resolved: pass@k = 1 - C(n-c, k) / C(n, k) (the
    chance that k tries drawn without replacement include a success), pass^k = C(c, k) / C(n, k)
    (that all k succeed).
    """
    values = []
    for outcomes in tries.values():
        n = len(outcomes)
        if n < k:
            continue
        c = sum(1 for o in outcomes if o >= 0.5)
        total = math.comb(n, k)
        values.append(math.comb(c, k) / total if every else 1 - math.comb(n - c, k) / total)
    return statistics.fmean(values) if values else None


@dataclass(frozen=True, slots=True)
class Cell:
    """One family under one configuration: its seeds' outcomes."""

    resolved: int
    episodes: int
    grade: float
    seeds: tuple[tuple[int, bool, float, bool], ...]
    """(seed, resolved, grade, on the test split) of each episode, by seed."""


def pass_matrix(rows: Sequence[EpisodeRow]) -> dict[tuple[str, str], Cell]:
    """(family, configuration) -> its cell."""
    groups: dict[tuple[str, str], list[EpisodeRow]] = {}
    for r in rows:
        groups.setdefault((r.family, r.config), []).append(r)
    return {
        key: Cell(
            resolved=sum(r.resolved for r in group),
            episodes=len(group),
            grade=statistics.fmean(r.grade for r in group),
            seeds=tuple(sorted((r.seed, r.resolved, r.grade, r.split == "test") for r in group)),
        )
        for key, group in groups.items()
    }
