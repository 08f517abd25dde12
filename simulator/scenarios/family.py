"""What a family's seeds span: its distinct ground truths and its spread of difficulty."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..report import normalize_location
from .registry import ScenarioEntry
from .spec import ScenarioSpec

CATALOGUE_SEEDS = range(100)
"""The seeds a family's variety is counted over (`metasre scenarios`, `metasre validate`)."""

MIN_GROUND_TRUTHS = 20
"""A family must have at least this many distinct ground truths over CATALOGUE_SEEDS."""

GroundTruthKey = tuple[str, str, tuple[int, int] | None, str, str]


def ground_truth_key(spec: ScenarioSpec) -> GroundTruthKey:
    """What a solver must find for one seed.

    The root service, the location (normalised), the lines, the category and the remediation:
    two seeds with the same key are one incident.
    """
    t = spec.ground_truth
    return (t.service, normalize_location(t.location), t.lines, t.category, t.remediation)


@dataclass(frozen=True, slots=True)
class FamilySummary:
    """A family's variety over some seeds."""

    id: str
    title: str
    severity: str
    seeds: int
    """How many seeds were rendered."""
    ground_truths: int
    """Distinct ground truths among them (see ground_truth_key)."""
    root_services: int
    """Distinct root-cause services among them."""
    categories: tuple[str, ...]
    remediations: tuple[str, ...]
    difficulty: dict[str, int]
    """Seeds per difficulty (easy, medium, hard)."""
    seed_varies: tuple[str, ...]
    part_of: str | None = None
    """The symptom-first family this one is a part of (results are reported on that one)."""

    def to_dict(self) -> dict[str, object]:
        """Plain data for --json."""
        return {
            "id": self.id,
            "title": self.title,
            "severity": self.severity,
            "seeds": self.seeds,
            "ground_truths": self.ground_truths,
            "root_services": self.root_services,
            "categories": list(self.categories),
            "remediations": list(self.remediations),
            "difficulty": self.difficulty,
            "seed_varies": list(self.seed_varies),
            "part_of": self.part_of,
        }


def summarize(entry: ScenarioEntry, seeds: Iterable[int] = CATALOGUE_SEEDS) -> FamilySummary:
    """Render `entry`'s specs for `seeds` (no code trees: about 1 ms a seed) and count."""
    specs = [entry.spec(s) for s in seeds]
    keys = {ground_truth_key(s) for s in specs}
    difficulty = Counter(s.difficulty for s in specs)
    first = specs[0]
    return FamilySummary(
        id=entry.id,
        title=first.title,
        severity=first.severity,
        seeds=len(specs),
        ground_truths=len(keys),
        root_services=len({k[0] for k in keys}),
        categories=tuple(sorted({k[3] for k in keys})),
        remediations=tuple(sorted({k[4] for k in keys})),
        difficulty={d: difficulty[d] for d in ("easy", "medium", "hard") if difficulty[d]},
        seed_varies=first.seed_varies,
        part_of=entry.part_of,
    )


__all__ = [
    "CATALOGUE_SEEDS",
    "MIN_GROUND_TRUTHS",
    "FamilySummary",
    "GroundTruthKey",
    "ground_truth_key",
    "summarize",
]
