"""Seed lists as people write them (`7`, `0-99`, `1,5,9`, `0-4,10`), parsed and written back."""

from __future__ import annotations

from collections.abc import Sequence

MAX_SEED = 2**31 - 1
"""The largest seed a server accepts (CreateSession's bound)."""
MAX_SEEDS = 100_000
"""The most seeds one list may name: a typo like 0-99999999 is refused before any work."""
SEEDS_SYNTAX = "a seed list: 7 (seed 7), 0-99 (a range), 1,5,9 or 0-4,10"


def parse_seeds(text: str) -> list[int]:
    """The seeds of `7`, `0-99`, `1,5,9` or `0-4,10`, in order, each once.

    A lone number is that seed, never a count: `7` is seed 7 only.

    Raises:
        ValueError: the text names no seed, or something that is not one (the message says
            what is allowed).
    """
    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or not all(parts):
        raise ValueError(f"{text!r} is not {SEEDS_SYNTAX}")
    seeds: list[int] = []
    for part in parts:
        low, dash, high = part.partition("-")
        try:
            first, last = int(low), int(high) if dash else int(low)
        except ValueError:
            raise ValueError(f"{text!r} is not {SEEDS_SYNTAX}") from None
        if not 0 <= first <= last <= MAX_SEED:
            raise ValueError(
                f"{part!r} in {text!r}: seeds are 0 to {MAX_SEED} and a range goes up "
                f"(low-high); use {SEEDS_SYNTAX}"
            )
        if len(seeds) + last - first + 1 > MAX_SEEDS:
            raise ValueError(f"{text!r} names more than {MAX_SEEDS} seeds; pick a shorter range")
        seeds += range(first, last + 1)
    return list(dict.fromkeys(seeds))


def seeds_text(seeds: Sequence[int]) -> str:
    """`seeds` in the seed-list syntax, runs as ranges: `0-4,10`."""
    parts: list[str] = []
    i = 0
    while i < len(seeds):
        j = i
        while j + 1 < len(seeds) and seeds[j + 1] == seeds[j] + 1:
            j += 1
        parts.append(str(seeds[i]) if i == j else f"{seeds[i]}-{seeds[j]}")
        i = j + 1
    return ",".join(parts)


__all__ = ["MAX_SEED", "MAX_SEEDS", "SEEDS_SYNTAX", "parse_seeds", "seeds_text"]
