"""The scale section's clients: several `bench._scale_client` processes driven side by side.

Each process holds its share of the sessions over its own channels and times its own calls;
`Fleet.act` starts the active phase in all of them at once and merges what they report. One
process with one channel is the old single-client setup, kept as a row because it shows what
a client that multiplexes thousands of streams on one connection sees.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass
from typing import Any

from bench.common import ROOT


@dataclass(frozen=True, slots=True)
class FleetResult:
    """What the clients of one active phase saw."""

    latencies_ms: list[float]
    """Every call's time, measured by the process that made it."""
    errors: int
    wall_s: float
    """The longest active phase of any process."""
    cpu_s: list[float]
    """Each client process's CPU time in the active phase."""
    loop_lag: list[dict[str, Any]]
    """Each client process's event-loop lag in the active phase (see `bench._trace`)."""
    gc: list[dict[str, Any]]
    """Each client process's garbage-collector pauses in the active phase."""
    main_thread: list[dict[str, float]]
    """Each client process's event-loop thread: CPU seconds, seconds waiting for a CPU."""


class Fleet:
    """`processes` client processes holding `sessions` sessions over `channels` channels each."""

    def __init__(
        self,
        address: str,
        sessions: int,
        *,
        processes: int = 1,
        channels: int = 1,
        agents: int = 3,
        scenario: str = "meta-sre/migration-cascade-v3",
    ) -> None:
        self.address = address
        self.shares = [sessions // processes + (i < sessions % processes) for i in range(processes)]
        self.channels = channels
        self.agents = agents
        self.scenario = scenario
        self.setup_s = 0.0
        self.turn_policies: set[str] = set()
        """The turn policies the server reported when the seats joined."""
        self._procs: list[asyncio.subprocess.Process] = []

    async def start(self) -> None:
        """Start the processes and wait until every seat is joined."""
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        env = dict(os.environ, PYTHONPATH=path)
        start = time.perf_counter()
        for share in self.shares:
            self._procs.append(
                await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "bench._scale_client",
                    self.address,
                    "--sessions",
                    str(share),
                    "--agents",
                    str(self.agents),
                    "--channels",
                    str(self.channels),
                    "--scenario",
                    self.scenario,
                    cwd=ROOT,
                    env=env,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    limit=1 << 26,  # the latencies come back as one long line
                )
            )
        for proc, ready in zip(
            self._procs, await asyncio.gather(*map(_read, self._procs)), strict=True
        ):
            if not ready.get("ready"):
                raise RuntimeError(f"scale client {proc.pid} did not get ready: {ready}")
            self.turn_policies.update(ready["turn_policies"])
        self.setup_s = time.perf_counter() - start

    async def act(
        self,
        active: int,
        seconds: float,
        think: float,
        calls: int,
        *,
        seat: int = 0,
        only: int | None = None,
        quiet_gc: bool = True,
    ) -> FleetResult:
        """Make `active` agents call for `seconds`, spread over the processes by their shares.

        `seat`: the seat of each session the phase starts from (give each phase its own, so no
        session runs out of steps). `only`: put every active agent in that one process (and
        on its channels). `quiet_gc`: the clients collect no garbage (see
        `bench._scale_client.quiet_gc`).
        """
        total = sum(self.shares)
        per = [active * share // total for share in self.shares]
        per[0] += active - sum(per)
        if only is not None:
            per = [active if k == only else 0 for k in range(len(self._procs))]
        busy = [(k, proc, n) for k, (proc, n) in enumerate(zip(self._procs, per, strict=True)) if n]
        for k, proc, n in busy:
            order = {
                "active": n,
                "seat": seat,
                "seconds": seconds,
                "think": think,
                "calls": calls,
                "seed": k,
                "quiet_gc": quiet_gc,
            }
            assert proc.stdin is not None
            proc.stdin.write((json.dumps(order) + "\n").encode())
            await proc.stdin.drain()
        reports = await asyncio.gather(*(_read(proc) for _, proc, _ in busy))
        return FleetResult(
            [ms for r in reports for ms in r["latencies_ms"]],
            sum(r["errors"] for r in reports),
            max(r["wall_s"] for r in reports),
            [r["cpu_s"] for r in reports],
            [r["loop_lag"] for r in reports],
            [r["gc"] for r in reports],
            [r["main_thread"] for r in reports],
        )

    async def close(self) -> None:
        """Hang up every stream and wait for the processes to end."""
        for proc in self._procs:
            if proc.stdin is not None and not proc.stdin.is_closing():
                proc.stdin.close()
        for proc in self._procs:
            try:
                await asyncio.wait_for(proc.wait(), 60)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        self._procs = []

    async def __aenter__(self) -> Fleet:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _read(proc: asyncio.subprocess.Process) -> dict[str, Any]:
    assert proc.stdout is not None
    while line := await proc.stdout.readline():
        if line.startswith(b"{"):
            result: dict[str, Any] = json.loads(line)
            return result
    raise RuntimeError(f"scale client {proc.pid} ended early (exit code {await proc.wait()})")
