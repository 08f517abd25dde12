"""Quantiles of measured times: a leaf, so the tracer inside a served child imports nothing else
of bench (`_serve` -> `_trace` -> here; `common` starts `_serve` and reads its names)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def pct(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0
