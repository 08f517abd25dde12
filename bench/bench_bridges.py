"""The bridges beside the native gRPC stream: cost per tool call and episodes per second.

    python -m bench.bench_bridges [--episodes 64] [--calls 5]

A META-SRE server runs in its own process, `metasre bridge openenv --mcp` in another; this
process drives the clients, one way at a time, interleaved by parallelism:

- native: the project's async client (`MetasreClient`, one Connect stream per seat);
- openenv: OpenEnv 0.10's own `GenericEnvClient` over the bridge's WebSocket;
- mcp: the official `mcp` 1.x client over the MCP server per seat (Streamable HTTP).

An episode is: make a session (seed varies) and take its one seat, `--calls` looks (alerts,
dependencies, logs), hang up (the bridge then closes the session it made). Per-call latency
is each call's round trip seen by the client; episodes per second is episodes over wall time;
CPU per call is each process's CPU time over the run (session set-up included) per tool call.
The clients all run in this one process, so at width 32 a heavy client (mcp's) can be the
bottleneck: its CPU column says so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from openenv import GenericEnvClient

from bench.common import ROOT, ServerProcess
from bench.stats import pct
from metasre.agents.client import MetasreClient

SCENARIO = "payment-bad-deploy"
LOOKS: list[tuple[str, dict[str, Any]]] = [
    ("get_alerts", {}),
    ("check_dependencies", {}),
    ("read_logs", {"service": "api-gateway"}),
]


def looks(n: int) -> list[tuple[str, dict[str, Any]]]:
    return [LOOKS[i % len(LOOKS)] for i in range(n)]


CLIENTS: dict[str, MetasreClient] = {}
"""One native client per event loop, as a trainer keeps one channel (the bridge keeps one too)."""


async def native(target: str, seed: int, n: int, times: list[float]) -> None:
    client = CLIENTS.setdefault(f"{target}/{id(asyncio.get_running_loop())}", MetasreClient(target))
    handle = await client.create_session(SCENARIO, seed=seed, seats=["agent"])
    async with client.agent(handle.id, handle.tokens["agent"]) as agent:
        for tool, args in looks(n):
            start = time.perf_counter()
            await agent.call(tool, args)
            times.append(time.perf_counter() - start)
    await client.close_session(handle.id)


async def openenv(url: str, seed: int, n: int, times: list[float]) -> None:
    async with GenericEnvClient(base_url=url) as env:
        await env.reset(scenario=SCENARIO, seed=seed)
        for tool, args in looks(n):
            start = time.perf_counter()
            await env.step({"type": "call_tool", "tool_name": tool, "arguments": args})
            times.append(time.perf_counter() - start)


async def mcp(url: str, seed: int, n: int, times: list[float]) -> None:
    async with httpx.AsyncClient(timeout=60) as http:
        made = (
            await http.post(f"{url}/sessions", json={"scenario": SCENARIO, "seed": seed})
        ).json()
    seat = made["seats"]["agent"]
    headers = {"Authorization": f"Bearer {seat['token']}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(seat["mcp_url"], http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for tool, args in looks(n):
            start = time.perf_counter()
            await session.call_tool(tool, args)
            times.append(time.perf_counter() - start)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run(
    play: Callable[[int, list[float]], Awaitable[None]], episodes: int, parallel: int
) -> dict[str, float]:
    times: list[float] = []
    gate = asyncio.Semaphore(parallel)

    async def one(seed: int) -> None:
        async with gate:
            await play(seed, times)

    start = time.perf_counter()
    await asyncio.gather(*(one(seed) for seed in range(episodes)))
    wall = time.perf_counter() - start
    for client in CLIENTS.values():
        await client.close()
    CLIENTS.clear()
    return {
        "episodes_per_s": episodes / wall,
        "call_p50_ms": 1000 * statistics.median(times),
        "call_p90_ms": 1000 * pct(times, 0.9),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=64, help="episodes per way and width")
    parser.add_argument("--calls", type=int, default=5, help="tool calls per episode")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with ServerProcess("metasre") as server:
        bridge = subprocess.Popen(
            [sys.executable, "-m", "metasre.cli.main", "bridge", "openenv", "--mcp",
             "--target", server.address, "--port", "0", "--max-seats", "4096"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        try:
            assert bridge.stdout is not None
            url = json.loads(bridge.stdout.readline())["url"]
            ways: dict[str, Callable[[int, list[float]], Awaitable[None]]] = {
                "native gRPC": lambda s, t: native(server.address, s, args.calls, t),
                "OpenEnv bridge": lambda s, t: openenv(url, s, args.calls, t),
                "MCP per seat": lambda s, t: mcp(url, s, args.calls, t),
            }
            rows = []
            for parallel in (1, 32):
                episodes = args.episodes if parallel > 1 else max(8, args.episodes // 4)
                for name, play in ways.items():
                    asyncio.run(run(play, 4, min(parallel, 4)))  # warm: imports, first seeds
                    cpu = (cpu_seconds(bridge.pid), server.cpu_seconds(), time.process_time())
                    figures = asyncio.run(run(play, episodes, parallel))
                    calls = episodes * args.calls
                    used = (
                        cpu_seconds(bridge.pid) - cpu[0],
                        server.cpu_seconds() - cpu[1],
                        time.process_time() - cpu[2],
                    )
                    rows.append({"way": name, "parallel": parallel, "episodes": episodes,
                                 **figures,
                                 "bridge_cpu_ms_per_call": 1000 * used[0] / calls,
                                 "server_cpu_ms_per_call": 1000 * used[1] / calls,
                                 "client_cpu_ms_per_call": 1000 * used[2] / calls})  # fmt: skip
        finally:
            bridge.terminate()
            bridge.wait(30)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"load average {os.getloadavg()[0]:.1f}; {args.calls} calls an episode")
    print(
        "| way | parallel | episodes/s | call p50 (ms) | call p90 (ms) | CPU ms per call: "
        "server | bridge | client |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['way']} | {r['parallel']} | {r['episodes_per_s']:.1f} | "
            f"{r['call_p50_ms']:.2f} | {r['call_p90_ms']:.2f} | "
            f"{r['server_cpu_ms_per_call']:.2f} | {r['bridge_cpu_ms_per_call']:.2f} | "
            f"{r['client_cpu_ms_per_call']:.2f} |"
        )


if __name__ == "__main__":
    main()
