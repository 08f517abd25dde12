"""What the red-team tests share: a family's training examples and test seeds, and a sweep.

Everything goes through the public path a policy has (`EpisodeCaller` over an `Episode`), the
training examples exactly as `metasre validate` builds them (its first SHALLOW_TRAIN_SEEDS
training seeds: the opening after the fixed glances, and the reference's calls).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from metasre.agents.policies.shallow import Example, ShallowLearner, Stumps, example, glance
from metasre.conformance import EpisodeCaller
from metasre.conformance.validate import SHALLOW_MAX, SHALLOW_TRAIN_SEEDS
from metasre.simulator import Episode, resolve
from metasre.simulator.scenarios.splits import split_seeds

SYMPTOM_FIRST = (
    "meta-sre/edge-errors-v3",
    "meta-sre/ads-errors-v3",
    "meta-sre/courier-errors-v3",
    "meta-sre/shop-errors-v4",
    "meta-sre/marketplace-slow-v4",
)
"""The families issue 25 holds to SHALLOW_MAX."""

TEST_SEEDS = 50
__all__ = [
    "SHALLOW_MAX",
    "SYMPTOM_FIRST",
    "TEST_SEEDS",
    "held_out",
    "stumps_learner",
    "sweep",
    "training",
]

Play = Callable[[EpisodeCaller, Mapping[str, Any]], None]


@lru_cache(maxsize=8)
def training(scenario_id: str) -> tuple[Example, ...]:
    """The training examples validate fits its shallow policies on."""
    entry = resolve(scenario_id)
    found = []
    for seed in split_seeds(entry, "train", SHALLOW_TRAIN_SEEDS):
        ep = Episode.make(entry.id, seed)
        opening = glance(EpisodeCaller(ep, "shallow"), ep.observation().to_dict())
        found.append(example(opening, [(s.tool, s.args) for s in ep.instance.spec.solution]))
    return tuple(found)


@lru_cache(maxsize=8)
def stumps_learner(scenario_id: str) -> ShallowLearner:
    """The learner with boosted stumps, fitted once per family and process (its fit is the
    dearest part of a sweep: 10-60 s at a load average of 10)."""
    return ShallowLearner(ops=Stumps()).fit(training(scenario_id))


def held_out(scenario_id: str, count: int = TEST_SEEDS) -> list[int]:
    """The first `count` seeds of the family's test split."""
    return split_seeds(resolve(scenario_id), "test", count)


def sweep(scenario_id: str, plays: Mapping[str, Play], count: int = TEST_SEEDS) -> dict[str, float]:
    """Each policy's mean grade over the family's first `count` test seeds."""
    grades: dict[str, list[float]] = {name: [] for name in plays}
    for seed in held_out(scenario_id, count):
        for name, play in plays.items():
            ep = Episode.make(scenario_id, seed)
            play(EpisodeCaller(ep, "shallow"), ep.observation().to_dict())
            grades[name].append(ep.grade().total)
    return {name: round(statistics.fmean(g), 3) for name, g in grades.items()}
