"""One client process of the scale section: `python -m bench._scale_client ADDRESS --sessions K`.

It creates K sessions of `--agents` seats, joins every seat over `--channels` channels (each
its own HTTP/2 connection), prints `{"ready": ...}` and waits for orders, one JSON line each on
stdin (`active`, `seat`, `seconds`, `think`, `calls`): that many of its agents call cheap tools
with exponential think time, each call timed here, on the client; then it prints the
latencies, its CPU time, its own event loop's lag and its garbage-collector pauses as one JSON
line, so the parent can tell the server's queuing from a busy client. Closing stdin hangs up
every stream and ends the process.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import sys
import time
from typing import Any

from bench._trace import Tracer
from metasre.agents.client import AgentConnection, MetasreClient
from metasre.agents.errors import ClientError


def channel_options(index: int) -> list[tuple[str, Any]]:
    """Options that give a channel its own connection.

    gRPC shares a subchannel (one TCP connection) between channels with equal arguments to the
    same address, even across channel objects; a local pool per channel keeps them apart.
    """
    return [("grpc.use_local_subchannel_pool", 1), ("bench.channel", index)]


async def _line() -> str:
    return await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)


def _say(payload: dict[str, Any]) -> None:
    print(json.dumps(payload), flush=True)


async def hold(
    clients: list[MetasreClient], scenario: str, sessions: int, agents: int, workers: int = 8
) -> tuple[list[list[AgentConnection]], set[str]]:
    """Create `sessions` sessions and join every seat; session i's seats use channel i % C.

    Returns the seats, and the turn policies the server reported for the sessions (the
    client's default, FREE_FOR_ALL: an agent never waits for a teammate's turn).
    """
    seats = [f"a{i}" for i in range(agents)]
    groups: list[list[AgentConnection] | None] = [None] * sessions
    policies: set[str] = set()
    todo = list(range(sessions))

    async def make() -> None:
        while todo:
            i = todo.pop()
            client = clients[i % len(clients)]
            handle = await client.create_session(scenario, seats=seats)
            group = [client.agent(handle.id, handle.tokens[s]) for s in seats]
            joined = await asyncio.gather(*(c.join() for c in group))
            policies.update(j["session"]["turn_policy"] for j in joined)
            groups[i] = group

    await asyncio.gather(*(make() for _ in range(workers)))
    return [g for g in groups if g is not None], policies


async def act(
    active: list[AgentConnection],
    calls: list[tuple[str, dict[str, Any]]],
    seconds: float,
    think: float,
    quotas: list[int],
    seed: int,
) -> tuple[list[float], int]:
    """Each agent calls until the deadline or its quota, thinking between calls."""
    latencies: list[float] = []
    errors = 0
    rng = random.Random(seed)
    deadline = time.perf_counter() + seconds

    async def one(agent: AgentConnection, k: int, quota: int) -> None:
        nonlocal errors
        await asyncio.sleep(rng.uniform(0, think))
        i = 0
        while time.perf_counter() < deadline and i < quota:
            tool, args = calls[(i + k) % len(calls)]
            t0 = time.perf_counter()
            try:
                await agent.call(tool, args)
            except ClientError:
                errors += 1
                return
            latencies.append((time.perf_counter() - t0) * 1000)
            i += 1
            # Thinking past the deadline would only make the phase longer.
            rest = deadline - time.perf_counter()
            await asyncio.sleep(max(0.0, min(rng.expovariate(1 / think), rest)))

    await asyncio.gather(
        *(one(a, k, q) for k, (a, q) in enumerate(zip(active, quotas, strict=True)))
    )
    return latencies, errors


def quiet_gc() -> None:
    """No garbage collection from here on in this process.

    The harness's own heap (thousands of streams, every pushed event kept in the inboxes)
    makes full collections of several hundred ms: they would stall this process's calls and
    be charged to the server. The process ends after the run, so nothing needs collecting.
    """
    gc.collect()
    gc.freeze()
    gc.disable()


async def run(args: argparse.Namespace) -> None:
    from bench.sections import cheap_calls

    calls = cheap_calls(args.scenario)
    clients = [
        MetasreClient(args.address, options=channel_options(i)) for i in range(args.channels)
    ]
    start = time.perf_counter()
    groups, policies = await hold(clients, args.scenario, args.sessions, args.agents)
    _say(
        {
            "ready": True,
            "sessions": len(groups),
            "setup_s": time.perf_counter() - start,
            "turn_policies": sorted(policies),
        }
    )
    tracer = Tracer()
    tracer.start_lag_sampler()
    n = len(groups)
    while line := await _line():
        order = json.loads(line)
        if order.get("quiet_gc", True):
            quiet_gc()
            await asyncio.sleep(0.02)  # the lag sampler's sample that spans the collection
        else:
            gc.enable()
        # Spread the active agents over the sessions first, then over the seats, from the
        # order's seat on. A session's agents share its steps: in one phase they make at most
        # `calls` calls between them, so phases never run a session out of steps.
        seat = order.get("seat", 0)
        count = min(order["active"], n * args.agents)
        chosen = [groups[i % n][(seat + i // n) % args.agents] for i in range(count)]
        per_session = [len(range(i % n, count, n)) for i in range(count)]
        quotas = [max(1, order["calls"] // k) for k in per_session]
        tracer.reset()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        latencies, errors = await act(
            chosen, calls, order["seconds"], order["think"], quotas, order.get("seed", 7)
        )
        wall = time.perf_counter() - wall0
        report = tracer.report()
        _say(
            {
                "latencies_ms": latencies,
                "errors": errors,
                "active": len(chosen),
                "wall_s": wall,
                "cpu_s": time.process_time() - cpu0,
                "loop_lag": report.get("loop_lag", {}),
                "gc": {k: v for k, v in report.items() if k.startswith("gc")},
                "main_thread": report["threads"].get("main", {}),
            }
        )
    for group in groups:
        for conn in group:
            await conn.close()
    for client in clients:
        await client.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("address")
    parser.add_argument("--sessions", type=int, required=True)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--channels", type=int, default=1)
    parser.add_argument("--scenario", default="meta-sre/migration-cascade-v3")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
