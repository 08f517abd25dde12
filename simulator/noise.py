"""Deterministic pseudo-random noise keyed by names and numbers, independent of call order."""

from __future__ import annotations

import zlib

_MASK = (1 << 64) - 1


def _mix(x: int) -> int:
    # splitmix64 finaliser: cheap, well distributed, and the same on every platform.
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def key(*parts: str | int) -> int:
    """A stable 64-bit key for a tuple of names and numbers (never Python's salted hash)."""
    acc = 0
    for part in parts:
        raw = part.encode() if isinstance(part, str) else part.to_bytes(8, "little", signed=True)
        acc = _mix(acc ^ zlib.crc32(raw) ^ (len(raw) << 32))
    return acc


def unit(seed: int, stream: int, index: int) -> float:
    """A number in [0, 1) that depends only on (seed, stream, index)."""
    return unit_at(seeded(seed, stream), index)


def seeded(seed: int, stream: int) -> int:
    """The part of `unit` that does not depend on the index, for a caller that draws many."""
    return _mix(seed & _MASK ^ stream)


def unit_at(seeded_stream: int, index: int) -> float:
    """`unit(seed, stream, index)`, given `seeded(seed, stream)`."""
    return _mix(seeded_stream ^ (index & _MASK)) / float(1 << 64)


def signed_at(seeded_stream: int, index: int) -> float:
    """A number in [-1, 1) that depends only on (seed, stream, index), given `seeded`."""
    return 2.0 * unit_at(seeded_stream, index) - 1.0
