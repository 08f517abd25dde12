"""Simulated wall time: the incident starts at a seed-dependent moment, minutes count from it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import lru_cache, partial

from . import noise

_EPOCH = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)


def incident_start(scenario_id: str, seed: int) -> datetime:
    """When the pager went off, for this scenario and seed (within 60 days of a fixed epoch)."""
    offset = noise.key(scenario_id, seed) % (60 * 24 * 60)
    return _EPOCH + timedelta(minutes=offset)


@lru_cache(maxsize=16384)  # log windows re-render the same minutes on every read
def stamp(start: datetime, minute: float, second: int = 0) -> str:
    """ISO-8601 UTC timestamp of `minute` (since the page) plus `second` seconds."""
    moment = start + timedelta(minutes=int(minute // 1), seconds=second)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def stamps(start: datetime, minute: int) -> Callable[[int], str]:
    """`second -> stamp(start, minute, second)` for seconds 0-59, for many lines of one minute.

    One strftime per minute instead of one per line, when `start` falls on a whole minute (as
    `incident_start` always does); any other start takes the general path.
    """
    if start.second or start.microsecond:
        return partial(stamp, start, minute)
    head = stamp(start, minute)[:-3]  # "...THH:MM:" of "...THH:MM:00Z"
    return lambda second: f"{head}{second:02d}Z"
