"""How a server's CPU and memory per session grow with seats, held sessions and families.

Usage: python -m bench.bench_growth [--sessions 10 100 1000] [--seats 1 3 8]
    [--seat-sessions 100] [--family-sessions 20] [--families NAME ...] [--calls 3] [--json]

Every point runs on a fresh META-SRE server process with its trajectory store: N sessions are
made (8 at a time, seeds 0-4 in turn), every seat joins, makes ``--calls`` cheap calls
(read_logs, get_alerts, view_file in turn) and hangs up, and the session stays open (what a
server holds while its agents think). Per point: the server's CPU per session (create, joins,
calls, store writes) and its RSS growth per held session. Three sweeps: held sessions (one
seat, the cheap scenario), seats per session (``--seat-sessions``, the cheap scenario) and families
(``--family-sessions`` sessions of each registered family, one seat). For sizing a machine:
sessions x RSS per session is the memory a server holds; CPU per session over an episode's
length is the cores it keeps busy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from dataclasses import asdict, dataclass

from bench.common import ServerProcess
from bench.sections import CHEAP_SCENARIO, cheap_calls
from metasre.agents.client import MetasreClient


@dataclass
class Point:
    sweep: str
    scenario: str
    sessions: int
    seats: int
    server_cpu_ms_per_session: float
    rss_kib_per_session: float


async def _fill(
    client: MetasreClient,
    scenario: str,
    names: list[str],
    calls: int,
    count: int,
    workers: int,
) -> None:
    """Make `count` sessions of `scenario` with seats `names`; each seat joins, calls, leaves."""
    tools = cheap_calls(scenario)
    queue = list(range(count))

    async def worker() -> None:
        while queue:
            seed = queue.pop() % 5
            handle = await client.create_session(scenario, seed=seed, seats=names)
            for name in names:
                conn = client.agent(handle.id, handle.tokens[name])
                await conn.join()
                for i in range(calls):
                    tool, args = tools[i % len(tools)]
                    await conn.call(tool, args)
                await conn.close()  # the session stays open, held, with nobody connected

    await asyncio.gather(*(worker() for _ in range(workers)))


async def _play(scenario: str, sessions: int, seats: int, calls: int) -> tuple[float, float]:
    """Fill a fresh server; return its CPU ms and RSS KiB per held session."""
    names = [f"s{i}" for i in range(seats)]
    with ServerProcess("metasre", store=True, max_sessions=sessions + 64) as server:
        async with MetasreClient(server.address) as client:
            await _fill(client, scenario, names, calls, 8, 4)  # imports, first renders
            await asyncio.sleep(0.3)
            rss0, cpu0 = server.rss_kib(), server.cpu_seconds()
            await _fill(client, scenario, names, calls, sessions, 8)
            cpu = server.cpu_seconds() - cpu0
            await asyncio.sleep(0.5)  # the store writer catches up
            rss = server.rss_kib() - rss0
    return cpu / sessions * 1000, rss / sessions


def _measure(sweep: str, scenario: str, sessions: int, seats: int, calls: int) -> Point:
    cpu, rss = asyncio.run(_play(scenario, sessions, seats, calls))
    return Point(sweep, scenario, sessions, seats, cpu, rss)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sessions", type=int, nargs="+", default=[10, 100, 1000])
    p.add_argument("--seats", type=int, nargs="+", default=[1, 3, 8])
    p.add_argument("--seat-sessions", type=int, default=100, help="sessions per seats point")
    p.add_argument("--family-sessions", type=int, default=20, help="0: no family sweep")
    p.add_argument("--families", nargs="*", help="scenario ids or names (default: all)")
    p.add_argument("--calls", type=int, default=3, help="cheap calls per seat")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    from metasre.simulator import resolve, scenario_ids

    points = [_measure("held sessions", CHEAP_SCENARIO, n, 1, args.calls) for n in args.sessions]
    points += [
        _measure("seats", CHEAP_SCENARIO, args.seat_sessions, s, args.calls) for s in args.seats
    ]
    if args.family_sessions:
        families = [resolve(f).id for f in args.families] if args.families else scenario_ids()
        points += [_measure("families", f, args.family_sessions, 1, args.calls) for f in families]
    if args.json:
        print(json.dumps([asdict(x) for x in points], indent=2))
        return 0
    print(f"load average {os.getloadavg()[0]:.1f}; {args.calls} cheap calls per seat")
    print("| sweep | scenario | sessions | seats | server CPU ms a session | RSS KiB a session |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for x in points:
        print(
            f"| {x.sweep} | {x.scenario.removeprefix('meta-sre/')} | {x.sessions} | {x.seats} |"
            f" {x.server_cpu_ms_per_session:.1f} | {x.rss_kib_per_session:.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
