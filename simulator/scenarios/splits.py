"""Train and test splits of a family: seeds whose structures never meet across the split.

A family's seed chooses its structure (see render.draw_variants). The split axis's tables are
divided once: a quarter of them (loader.split_axis) make the test split, so a policy fitted on
training seeds never saw a test seed's structure (its site, mechanism and remedy), and a result
on the test split measures what was learned rather than what was remembered. Report results on
the test split only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, Protocol

Split = Literal["train", "test"]
SPLITS: tuple[Split, ...] = ("train", "test")

_SEARCH_LIMIT = 1_000_000
"""No family's split is sparser than this: a search past it is a bug, not a slow family."""


class _Splittable(Protocol):
    @property
    def id(self) -> str: ...

    def is_test(self, seed: int) -> bool: ...


def split_of(entry: _Splittable, seed: int) -> Split:
    """The split `seed` of `entry`'s family belongs to."""
    return "test" if entry.is_test(seed) else "train"


def in_split(entry: _Splittable, seeds: Iterable[int], split: Split) -> list[int]:
    """The seeds of `seeds` that belong to `split`, in order."""
    return [s for s in seeds if split_of(entry, s) == split]


def split_seeds(entry: _Splittable, split: Split, count: int, start: int = 0) -> list[int]:
    """The first `count` seeds from `start` on that belong to `split`."""
    found: list[int] = []
    seed = start
    while len(found) < count:
        if seed - start > _SEARCH_LIMIT:
            raise ValueError(f"{entry.id} has fewer than {count} {split} seeds near {start}")
        if split_of(entry, seed) == split:
            found.append(seed)
        seed += 1
    return found


__all__ = ["SPLITS", "Split", "in_split", "split_of", "split_seeds"]
