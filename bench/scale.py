"""The scale section: 1,000 sessions x 3 agents held on one server, 10% of the agents calling.

The sessions are held by `Sizes.scale_processes` client processes (`bench._fleet`), each on its
own connection and timing its own calls, so a busy client does not pass for a slow server.
The server runs with `bench._trace`, so each phase also reports the server's own view: its
time per call, its store commits, its event-loop stalls and full garbage collections, and how
long its event-loop thread waited for a CPU (on a shared machine, other work takes the CPU).

Three active phases, each on its own seat of the same sessions:

1. `spread`: the active agents spread over every client process (the headline figures);
2. `one`: the same number of active agents in one client process on one channel (the old
   setup: it shows what multiplexing every active stream on one connection costs);
3. `frozen`: a diagnostic, as `spread` with the server's garbage collector frozen first
   (`gc.freeze()`: nothing that exists is scanned again); the gap to `spread` is what the
   server's full collections cost. It runs last since it changes the server.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from bench._fleet import Fleet, FleetResult
from bench.common import Row, ServerProcess
from bench.sections import CHEAP_SCENARIO, Sizes, call_loop, cheap_calls
from bench.stats import median, pct
from metasre.agents.client import MetasreClient


@dataclass(frozen=True, slots=True)
class Phase:
    """One active phase of the section."""

    name: str
    seat: int
    """The seat of each session it starts from: each phase its own, so steps never run out."""
    one_process: bool = False
    """Every active agent in the first client process, on its one channel."""
    freeze_server_gc: bool = False


PHASES = (
    Phase("spread", 0),
    Phase("one", 1, one_process=True),
    Phase("frozen", 2, freeze_server_gc=True),
)


async def scale(sizes: Sizes) -> tuple[list[Row], dict[str, Any]]:
    n, agents = sizes.scale_sessions, sizes.agents
    calls = cheap_calls(CHEAP_SCENARIO)
    active = max(1, n * agents // 10)
    out: dict[str, Any] = {
        "sessions": n,
        "agents_per_session": agents,
        "active_agents": active,
        "client_processes": sizes.scale_processes,
    }
    with ServerProcess("metasre", store=True, max_sessions=n + 16, trace=True) as meta:
        rss_empty = meta.rss_kib()
        out["unloaded"] = await _unloaded(meta.address, calls)
        fleet = Fleet(
            meta.address, n, processes=sizes.scale_processes, agents=agents, scenario=CHEAP_SCENARIO
        )
        async with fleet:
            out["setup_s"] = fleet.setup_s
            out["turn_policies"] = sorted(fleet.turn_policies)
            await asyncio.sleep(1.0)
            rss_connected = meta.rss_kib()
            rss_active = rss_connected
            for phase in PHASES:
                if phase.freeze_server_gc:
                    out["server_gc_freeze"] = meta.ask("gc-freeze")
                await asyncio.sleep(0.5)  # let the last phase's stragglers and writes settle
                meta.trace_reset()
                cpu0 = meta.cpu_seconds()
                result = await fleet.act(
                    active,
                    sizes.scale_seconds,
                    sizes.scale_think_seconds,
                    36 // agents,
                    seat=phase.seat,
                    only=0 if phase.one_process else None,
                )
                cpu = meta.cpu_seconds() - cpu0
                out[phase.name] = _summary(phase, result, cpu, meta.trace(), sizes)
                rss_active = max(rss_active, meta.rss_kib())
    out["rss_empty_mib"] = rss_empty / 1024
    out["rss_connected_mib"] = rss_connected / 1024
    out["rss_active_mib"] = rss_active / 1024
    return _rows(out, max(rss_connected, rss_active), rss_empty), out


async def _unloaded(address: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, float]:
    """One agent on an otherwise empty server, calls one after another: the reference."""
    async with MetasreClient(address) as client:
        handle = await client.create_session(CHEAP_SCENARIO, seats=["solo"])
        async with client.agent(handle.id, handle.tokens["solo"]) as solo:
            latencies: list[float] = []
            await call_loop(solo, calls, 36, latencies, 0)
        await client.close_session(handle.id)
    return {"p50_ms": median(latencies), "p99_ms": pct(latencies, 0.99)}


def _summary(
    phase: Phase, result: FleetResult, server_cpu: float, trace: dict[str, Any], sizes: Sizes
) -> dict[str, Any]:
    lat = result.latencies_ms
    wall = max(result.wall_s, 1e-9)
    window = max(trace.get("window_s", wall), 1e-9)
    submit = trace.get("submit", {})
    flush = trace.get("flush", {})
    commit = trace.get("commit", {})
    full = trace.get("gc2", {})
    stall = trace.get("stall", {})
    main = trace.get("threads", {}).get("main", {})  # the event loop's thread
    return {
        "client_processes": 1 if phase.one_process else sizes.scale_processes,
        "calls": len(lat),
        "errors": result.errors,
        "calls_per_s": len(lat) / wall,
        "p50_ms": median(lat),
        "p90_ms": pct(lat, 0.9),
        "p99_ms": pct(lat, 0.99),
        "server_cpu_share": server_cpu / wall,
        "client_cpu_share": [c / wall for c in result.cpu_s],
        "client_loop_lag_max_ms": [lag.get("max_ms", 0.0) for lag in result.loop_lag],
        "client_loop_runqueue_share": [t.get("runqueue_s", 0.0) / wall for t in result.main_thread],
        "server_call_p50_ms": submit.get("p50_ms", 0.0),
        "server_call_p99_ms": submit.get("p99_ms", 0.0),
        "server_store_wait_ms_per_call": flush.get("sum_ms", 0.0) / max(1, submit.get("n", 0)),
        "server_commit_p50_ms": commit.get("p50_ms", 0.0),
        "server_commit_p99_ms": commit.get("p99_ms", 0.0),
        "server_full_gc_count": full.get("n", 0),
        "server_full_gc_max_ms": full.get("max_ms", 0.0),
        "server_loop_lag_max_ms": trace.get("loop_lag", {}).get("max_ms", 0.0),
        "server_stalled_share": stall.get("sum_ms", 0.0) / 1000 / window,
        "server_loop_cpu_share": main.get("cpu_s", 0.0) / window,
        "server_loop_runqueue_share": main.get("runqueue_s", 0.0) / window,
        "trace": trace,
    }


def _rows(out: dict[str, Any], peak_kib: int, empty_kib: int) -> list[Row]:
    n, agents, active = out["sessions"], out["agents_per_session"], out["active_agents"]
    spread, one, frozen = out["spread"], out["one"], out["frozen"]
    unloaded = out["unloaded"]
    procs = spread["client_processes"]
    return [
        Row(
            "scale",
            f"server RSS, {n} sessions x {agents} agents connected (MiB)",
            peak_kib / 1024,
            "MiB",
            empty_kib / 1024,
            peak_kib / max(empty_kib, 1),
            "< 1 GiB",
            peak_kib < 1024 * 1024,
        ),
        Row(
            "scale",
            f"cheap-call p50, {active} agents active on {procs} client processes (ms)",
            spread["p50_ms"],
            "ms",
            unloaded["p50_ms"],
            spread["p50_ms"] / max(unloaded["p50_ms"], 1e-9),
        ),
        Row(
            "scale",
            f"cheap-call p99, {spread['calls_per_s']:.0f} calls/s offered (ms)",
            spread["p99_ms"],
            "ms",
            unloaded["p99_ms"],
            spread["p99_ms"] / max(unloaded["p99_ms"], 1e-9),
            "< 50 ms",
            spread["p99_ms"] < 50,
        ),
        Row(
            "scale",
            "  the same on 1 client process and 1 channel, p99 (ms)",
            one["p99_ms"],
            "ms",
            spread["p99_ms"],
            one["p99_ms"] / max(spread["p99_ms"], 1e-9),
        ),
        Row(
            "scale",
            "  server's own time per call p99: queue, apply, commit (ms)",
            spread["server_call_p99_ms"],
            "ms",
            spread["p99_ms"],
            spread["server_call_p99_ms"] / max(spread["p99_ms"], 1e-9),
        ),
        Row(
            "scale",
            f"  server full GC pause, longest of {spread['server_full_gc_count']} (ms)",
            spread["server_full_gc_max_ms"],
            "ms",
        ),
        Row(
            "scale",
            "  server event loop waiting for a CPU, share (baseline: running)",
            spread["server_loop_runqueue_share"],
            "share",
            spread["server_loop_cpu_share"],
        ),
        Row(
            "scale",
            "  diagnostic: p99 with the server's GC frozen (ms)",
            frozen["p99_ms"],
            "ms",
            spread["p99_ms"],
            frozen["p99_ms"] / max(spread["p99_ms"], 1e-9),
        ),
    ]


__all__ = ["PHASES", "Phase", "scale"]
