"""Short garbage-collector pauses on a server that holds thousands of sessions.

A full collection walks every tracked object, and a server holding 1,000 sessions of three
connected agents tracks over half a million of them (each Connect stream alone brings ~120:
coroutines, tasks, futures, generators). Measured in the scale benchmark, each full collection
stopped the server for 385-905 ms, twice in eight seconds: every call in flight waited.

The keeper moves objects that have lived a while into the permanent generation (`gc.freeze`),
so automatic collections only walk what is new. Frozen objects freed by reference counting are
freed as usual; a closed session's cyclic garbage is not, until the next reclaim, which
unfreezes and collects everything once sessions amounting to half of those still open (at least
`min_reclaim_sessions`) have closed since the last one, or all have: what closed sessions leave
stays within a bound, and the long pause comes only after churn, when much of what it walks is
garbage. Ticks are a quarter of a second apart, so a collection before each freeze walks what
a quarter of a second made: with 1,000 sessions and 300 calls a second, pauses of 4 ms at the
median instead of 15 ms with a tick a second, for the same total (measured in the scale
benchmark, `gc2` in its trace).

Process-wide, so only a server that owns its process turns it on (`ServerConfig.manage_gc`).
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable

import structlog

log = structlog.get_logger("metasre.service.gc_freeze")

YOUNG_THRESHOLD = 20_000
"""Allocations between young collections (CPython's default is 700): fewer, larger young passes
cost less in total on a server that allocates a few hundred objects per call."""


MIN_RECLAIM_SESSIONS = 256
"""Closed sessions that make a reclaim due on a small server. A reclaim walks the whole heap
(70-170 ms with a rollout's 32 sessions open, most of it the scenarios and caches that every
session shares), while a closed session is freed by reference counting and leaves only a few
dozen objects of cyclic garbage (gRPC's per-call objects): at 32, rollouts of 20 episodes a
second paid a reclaim every 1.6 s; at 256, every 13 s."""


class GcFreezer:
    """Freezes the long-lived heap every `period` seconds; reclaims after churn (see module)."""

    def __init__(
        self, period: float = 0.25, min_reclaim_sessions: int = MIN_RECLAIM_SESSIONS
    ) -> None:
        self.period = period
        self.min_reclaim_sessions = min_reclaim_sessions
        self.reclaims = 0
        self._closed_at_reclaim = 0
        self._saved_threshold = gc.get_threshold()

    def start(self) -> None:
        """Freeze what the server holds at start (imports, scenarios, recovered sessions)."""
        gc.collect()
        gc.freeze()
        _, older, oldest = gc.get_threshold()
        gc.set_threshold(YOUNG_THRESHOLD, older, oldest)

    def stop(self) -> None:
        """Give the process its collector back as it was."""
        gc.unfreeze()
        gc.set_threshold(*self._saved_threshold)

    def tick(self, live_sessions: int, closed_total: int) -> None:
        """Reclaim when due, then freeze what has survived since the last tick.

        Args:
            live_sessions: sessions the server holds now.
            closed_total: sessions closed since the server started.
        """
        closed = closed_total - self._closed_at_reclaim
        if closed >= max(self.min_reclaim_sessions, live_sessions // 2) or (
            closed and not live_sessions
        ):
            started = time.perf_counter()
            gc.unfreeze()
            found = gc.collect()
            self.reclaims += 1
            log.info(
                "heap_reclaimed",
                unreachable=found,
                closed_sessions=closed,
                live_sessions=live_sessions,
                ms=round((time.perf_counter() - started) * 1000, 1),
            )
            self._closed_at_reclaim = closed_total
            gc.freeze()
            return
        # A full collection now walks only what is new since the last freeze (a few ms), so no
        # garbage of the last few seconds gets frozen with the survivors.
        gc.collect()
        gc.freeze()

    async def run(self, sessions: Callable[[], tuple[int, int]]) -> None:
        """Tick every `period` seconds until cancelled; `sessions()` gives (live, closed_total)."""
        while True:
            await asyncio.sleep(self.period)
            self.tick(*sessions())
