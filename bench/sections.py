"""Four of the benchmark sections (scale is `bench.scale`); each returns rows and raw figures."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.common import Row, ServerProcess, echo_connection
from bench.stats import median, pct
from metasre.agents.client import AgentConnection, MetasreClient
from metasre.agents.errors import ClientError
from metasre.simulator import resolve

# 40 steps: 13 calls per agent of 3. Named without its version: each side of a side-by-side
# plays its own (an earlier tree knows an older one, this tree retires it).
CHEAP_SCENARIO = resolve("meta-sre/migration-cascade").id


@dataclass(frozen=True, slots=True)
class Sizes:
    """How big each section runs (flags scale them up)."""

    transport_rounds: int = 3
    transport_sessions: int = 16
    agents: int = 3
    resets: int = 1000
    test_runs: int = 15
    rollout_seeds: tuple[int, ...] = (0, 1, 2, 3)
    rollout_parallel: tuple[int, ...] = (1, 8, 32)
    rollout_scenarios: tuple[str, ...] = ()
    """Scenario ids or names the rollouts play (none: every registered id)."""
    scale_sessions: int = 1000
    scale_seconds: float = 8.0
    scale_think_seconds: float = 1.0
    scale_processes: int = 2
    """Client processes holding the scale section's sessions (each its own connection)."""


def cheap_calls(scenario_id: str) -> list[tuple[str, dict[str, Any]]]:
    """read_logs, get_alerts and view_file with arguments valid in `scenario_id`."""
    from metasre.simulator import Episode

    episode = Episode.make(scenario_id, 0)
    service = episode.instance.spec.ground_truth.service
    code = next(
        p for p in episode.workspace.walk() if p.endswith(".py") and not p.startswith("tests/")
    )
    return [
        ("read_logs", {"service": service}),
        ("get_alerts", {}),
        ("view_file", {"path": code}),
    ]


async def call_loop(
    agent: AgentConnection,
    calls: list[tuple[str, dict[str, Any]]],
    n: int,
    latencies: list[float],
    offset: int,
) -> int:
    errors = 0
    for i in range(n):
        tool, args = calls[(i + offset) % len(calls)]
        start = time.perf_counter()
        try:
            await agent.call(tool, args)
        except ClientError:
            errors += 1
            break
        latencies.append((time.perf_counter() - start) * 1000)
    return errors


# -- 1. transport ---------------------------------------------------------------------------------


async def _transport_round(
    address: str,
    echo: bool,
    sessions: int,
    agents: int,
    quota: int,
    calls: Any,
    batch: bool = True,
) -> tuple[float, list[float], int]:
    """One round: set up `sessions` x `agents` streams (untimed), then all call `quota` times."""
    async with MetasreClient(address) as client:
        conns: list[AgentConnection] = []
        ids: list[str] = []
        if echo:
            channel = client._channel
            # Grouped as the sessions are: the fan-out echo answers a group's streams together.
            conns = [
                echo_connection(channel, i // agents, batch_events=batch)
                for i in range(sessions * agents)
            ]
            await asyncio.gather(*(c.join() for c in conns))
        else:
            seats = [f"a{i}" for i in range(agents)]
            for _ in range(sessions):
                handle = await client.create_session(CHEAP_SCENARIO, seats=seats)
                ids.append(handle.id)
                conns += [
                    client.agent(handle.id, handle.tokens[s], batch_events=batch) for s in seats
                ]
            await asyncio.gather(*(c.join() for c in conns))
        latencies: list[float] = []
        start = time.perf_counter()
        errors = await asyncio.gather(
            *(call_loop(c, calls, quota, latencies, i) for i, c in enumerate(conns))
        )
        wall = time.perf_counter() - start
        for c in conns:
            await c.close()
        for sid in ids:
            await client.close_session(sid)
    return wall, latencies, sum(errors)


async def transport(sizes: Sizes) -> tuple[list[Row], dict[str, Any]]:
    calls = cheap_calls(CHEAP_SCENARIO)
    quota = 39 // sizes.agents
    out: dict[str, Any] = {}
    with (
        ServerProcess("echo") as echo,
        ServerProcess("echo", extra=("--fanout",)) as fanout,
        ServerProcess("metasre", store=True) as meta,
    ):
        # META-SRE twice: with event batches (the SDK's default) and one message per event (the
        # protocol's default, and the approach before batches), on the same server process.
        servers = (
            ("echo", echo, True, True),
            ("fanout", fanout, True, False),
            ("fanout_batched", fanout, True, True),
            ("metasre", meta, False, True),
            ("unbatched", meta, False, False),
        )
        walls = {name: 0.0 for name, *_ in servers}
        lat: dict[str, list[float]] = {name: [] for name, *_ in servers}
        cpu = {name: 0.0 for name, *_ in servers}
        errors = 0
        # Warm all (imports, channels, code paths), then alternate rounds so load hits all.
        for _, server, is_echo, batch in servers:
            await _transport_round(server.address, is_echo, 2, sizes.agents, 3, calls, batch)
        for _ in range(sizes.transport_rounds):
            for name, server, is_echo, batch in servers:
                cpu0 = server.cpu_seconds()
                wall, latencies, errs = await _transport_round(
                    server.address,
                    is_echo,
                    sizes.transport_sessions,
                    sizes.agents,
                    quota,
                    calls,
                    batch,
                )
                walls[name] += wall
                cpu[name] += server.cpu_seconds() - cpu0
                lat[name] += latencies
                errors += errs
    rate = {k: len(lat[k]) / walls[k] for k in walls}
    ratio = rate["metasre"] / rate["echo"]
    for k in walls:
        out[k] = {
            "calls": len(lat[k]),
            "calls_per_s": rate[k],
            "p50_ms": median(lat[k]),
            "p99_ms": pct(lat[k], 0.99),
            "server_cpu_ms_per_call": cpu[k] / max(1, len(lat[k])) * 1000,
            "server_cpu_share": cpu[k] / walls[k],
        }
    out["ratio"] = ratio
    out["errors"] = errors
    streams = f"{sizes.transport_sessions}x{sizes.agents}"

    def against(measure: str, figure: str, baseline: str, unit: str) -> Row:
        """META-SRE's `figure` beside the `baseline` run's, and their ratio."""
        mine, theirs = out["metasre"][figure], out[baseline][figure]
        return Row("transport", measure, mine, unit, theirs, mine / max(theirs, 1e-9))

    rows = [
        Row(
            "transport",
            f"throughput, {streams} streams (calls/s)",
            rate["metasre"],
            "calls/s",
            rate["echo"],
            ratio,
            ">= 0.5 x echo",
            ratio >= 0.5,
        ),
        against(
            f"  against an echo with the protocol's fan-out ({2 * sizes.agents} messages a call)",
            "calls_per_s",
            "fanout",
            "calls/s",
        ),
        against(
            f"  against that echo batching as META-SRE does ({sizes.agents} messages a call)",
            "calls_per_s",
            "fanout_batched",
            "calls/s",
        ),
        against(
            "  against META-SRE with one message per event (no StreamOptions.batch_events)",
            "calls_per_s",
            "unbatched",
            "calls/s",
        ),
        against("server CPU per call (ms)", "server_cpu_ms_per_call", "echo", "ms"),
        against(
            "  server CPU per call, META-SRE with batches against without (ms)",
            "server_cpu_ms_per_call",
            "unbatched",
            "ms",
        ),
        against("latency p50 (ms)", "p50_ms", "echo", "ms"),
        against("latency p99 (ms)", "p99_ms", "echo", "ms"),
    ]
    return rows, out


# -- 2. reset -------------------------------------------------------------------------------------


async def _create_and_join(client: MetasreClient, scenario: str, n: int, workers: int) -> None:
    queue = list(range(n))

    async def worker() -> None:
        while queue:
            seed = queue.pop()
            handle = await client.create_session(scenario, seed=seed % 5, seats=["a"])
            conn = client.agent(handle.id, handle.tokens["a"])
            await conn.join()
            await conn.close()  # the session stays open, idle, with nobody connected

    await asyncio.gather(*(worker() for _ in range(workers)))


def _graders(runner: Any) -> Any:
    """What this tree's Registry grades with: the catalogue, or (trees from before it, which
    the side-by-side tools run this harness on) the runner itself."""
    try:
        from metasre.simulator.catalog import default_catalog
    except ImportError:
        return runner
    return default_catalog().with_runner(runner)


async def _resets_in_process(n: int) -> tuple[float, float]:
    """CPU and wall ms per reset with no gRPC: what CreateSession and a join do on the server.

    A registry with a store in this process creates `n` sessions (episode, first observation,
    the session's row and Started event committed) and builds the observation a join sends.
    CPU is the whole process's (the store's writer thread included); wall includes the fsync.
    """
    import gc
    import tempfile
    from pathlib import Path

    from bench._serve import _one_owner
    from metasre.service import Limits
    from metasre.service.core.session import SeatSpec, SessionSpec
    from metasre.service.registry import Registry
    from metasre.service.store.sqlite import TrajectoryStore
    from metasre.service.wire import convert
    from metasre.simulator.sandbox import SubprocessRunner

    with tempfile.TemporaryDirectory(prefix="metasre-bench-") as tmp:
        store = TrajectoryStore(Path(tmp) / "reset.db")
        limits = Limits(max_sessions=n + 64, **_one_owner(Limits))
        registry = Registry(limits, _graders(SubprocessRunner()), store)
        try:

            async def one(seed: int) -> None:
                spec = SessionSpec(CHEAP_SCENARIO, seed % 5, (SeatSpec("a"),))
                session = await registry.create(spec)
                convert.observation_pb(session.episode.observation())

            for seed in range(20):  # warm: every seed rendered, every code path run
                await one(seed)
            gc.collect()
            cpu0, start = time.process_time(), time.perf_counter()
            for seed in range(n):
                await one(seed)
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - start
            for session in registry.sessions():
                await registry.close(session.id)
        finally:
            store.close()
    return cpu / n * 1000, wall / n * 1000


async def reset(sizes: Sizes) -> tuple[list[Row], dict[str, Any]]:
    n = sizes.resets
    in_cpu, in_wall = await _resets_in_process(min(n, 500))
    with ServerProcess("echo") as echo, ServerProcess("metasre", store=True) as meta:
        async with MetasreClient(meta.address) as client:
            await _create_and_join(client, CHEAP_SCENARIO, 20, 4)  # warm every code path
            await asyncio.sleep(0.2)
            rss0, cpu0 = meta.rss_kib(), meta.cpu_seconds()
            start = time.perf_counter()
            await _create_and_join(client, CHEAP_SCENARIO, n, 8)
            wall = time.perf_counter() - start
            cpu = meta.cpu_seconds() - cpu0
            await asyncio.sleep(0.5)  # let the store writer and the streams settle
            rss = meta.rss_kib() - rss0
        # The same number of stream opens and joins against the echo server, side by side.
        async with MetasreClient(echo.address) as client:
            for i in range(20):
                c = echo_connection(client._channel, i)
                await c.join()
                await c.close()
            ecpu0 = echo.cpu_seconds()
            estart = time.perf_counter()
            for i in range(n):
                c = echo_connection(client._channel, i)
                await c.join()
                await c.close()
            ewall = time.perf_counter() - estart
            ecpu = echo.cpu_seconds() - ecpu0
    ms = cpu / n * 1000
    kib = rss / n
    out = {
        "sessions": n,
        "server_cpu_ms_per_reset": ms,
        "client_wall_ms_per_reset": wall / n * 1000,
        "rss_kib_per_idle_session": kib,
        "echo_server_cpu_ms_per_join": ecpu / n * 1000,
        "echo_client_wall_ms_per_join": ewall / n * 1000,
        "in_process_cpu_ms_per_reset": in_cpu,
        "in_process_wall_ms_per_reset": in_wall,
    }
    rows = [
        Row(
            "reset",
            f"server CPU per CreateSession+join, {n} sessions (ms)",
            ms,
            "ms",
            out["echo_server_cpu_ms_per_join"],
            ms / max(out["echo_server_cpu_ms_per_join"], 1e-9),
            "< 1 ms",
            ms < 1.0,
        ),
        Row(
            "reset",
            "  the server's work alone, in process, no gRPC: CPU per reset (ms)",
            in_cpu,
            "ms",
            target="< 1 ms",
            holds=in_cpu < 1.0,
        ),
        Row(
            "reset",
            "client wall per CreateSession+join, 8 at once (ms)",
            out["client_wall_ms_per_reset"],
            "ms",
            out["echo_client_wall_ms_per_join"],
            out["client_wall_ms_per_reset"] / max(out["echo_client_wall_ms_per_join"], 1e-9),
        ),
        Row(
            "reset",
            "server RSS per idle session (KiB)",
            kib,
            "KiB",
            target="< 100 KB",
            holds=kib * 1024 < 100_000,
        ),
    ]
    return rows, out


# -- 3. test runs ---------------------------------------------------------------------------------

SUITE_SCENARIOS = {
    "unit": "meta-sre/ad-ranking-crash-v2",
    "integration": "meta-sre/checkout-crash-loop-v2",
    "load": "meta-sre/db-connection-leak-v2",
    "security": "meta-sre/pii-exposure-v2",
}


def test_runs(sizes: Sizes, fork_runner: Any) -> tuple[list[Row], dict[str, Any]]:
    from metasre.simulator import Episode
    from metasre.simulator.sandbox import CachingRunner, SubprocessRunner

    caching = CachingRunner(fork_runner)
    fresh = SubprocessRunner()
    rows: list[Row] = []
    out: dict[str, Any] = {}
    edit = 0

    def cold_run(runner: Any, scenario: str, suite: str) -> tuple[float, int]:
        nonlocal edit
        edit += 1
        ep = Episode.make(scenario, 0, runner)
        code = next(
            p for p in ep.workspace.walk() if p.endswith(".py") and not p.startswith("tests/")
        )
        ep.apply(
            "bench",
            "edit_lines",
            {"path": code, "action": "insert", "start_line": 1, "content": f"# bench {edit}"},
        )
        start = time.perf_counter()
        step = ep.apply("bench", "run_tests", {"suite": suite})
        ms = (time.perf_counter() - start) * 1000
        data = step.output.data
        return ms, int(data.get("passed", 0)) + int(data.get("failed", 0))

    try:
        for suite, scenario in SUITE_SCENARIOS.items():
            cold_run(caching, scenario, suite)  # warm the bytecode of unchanged files
            cold_ms: list[float] = []
            fresh_ms: list[float] = []
            tests = 0
            for i in range(sizes.test_runs):
                ms, tests = cold_run(caching, scenario, suite)
                cold_ms.append(ms)
                if i % 3 == 0:  # the fresh interpreter is far slower; sample it a third as often
                    fresh_ms.append(cold_run(fresh, scenario, suite)[0])
            ep = Episode.make(scenario, 0, caching)
            ep.apply("bench", "run_tests", {"suite": suite})
            cached_ms = []
            for _ in range(20):
                start = time.perf_counter()
                ep.apply("bench", "run_tests", {"suite": suite})
                cached_ms.append((time.perf_counter() - start) * 1000)
            cold = median(cold_ms)
            out[suite] = {
                "scenario": scenario,
                "tests": tests,
                "cold_median_ms": cold,
                "cold_p90_ms": pct(cold_ms, 0.9),
                "cached_median_ms": median(cached_ms),
                "fresh_interpreter_median_ms": median(fresh_ms),
            }
            small = suite == "unit"
            rows.append(
                Row(
                    "test runs",
                    f"run_tests {suite} ({tests} tests) cold, median (ms)",
                    cold,
                    "ms",
                    median(fresh_ms),
                    median(fresh_ms) / cold,
                    "< 10 ms (small suite)" if small else "",
                    cold < 10.0 if small else None,
                )
            )
            rows.append(
                Row(
                    "test runs",
                    f"run_tests {suite} cached, median (ms)",
                    median(cached_ms),
                    "ms",
                    cold,
                    cold / max(median(cached_ms), 1e-9),
                )
            )
    finally:
        fresh.close()
    return rows, out


# -- 4. rollouts ----------------------------------------------------------------------------------


def rollouts(sizes: Sizes) -> tuple[list[Row], dict[str, Any]]:
    from metasre.agents.policies import ExpertPolicy
    from metasre.agents.rollout import plan_episodes, run_rollout, solo_player
    from metasre.agents.sync import SyncClient
    from metasre.simulator import Episode, resolve, scenario_ids

    try:
        from metasre.agents.team_session import team_player
        from metasre.conformance import EpisodeCaller
    except ImportError:  # a tree from before they left the CLI (the side-by-side runs)
        from metasre.cli.inprocess import EpisodeCaller  # type: ignore[no-redef]
        from metasre.cli.rollout import team_player  # type: ignore[no-redef]

    ids = [resolve(s).id for s in sizes.rollout_scenarios] or scenario_ids()
    plan = plan_episodes(ids, list(sizes.rollout_seeds))
    rows: list[Row] = []
    out: dict[str, Any] = {"episodes": len(plan), "scenarios": len(ids)}

    # The same episodes with no wire at all, in this process, one at a time: the reference.
    start = time.perf_counter()
    for spec in plan:
        ep = Episode.make(spec.scenario_id, spec.seed)
        ExpertPolicy().play(EpisodeCaller(ep), ep.observation().to_dict())
        assert ep.grade().final
    local = len(plan) / (time.perf_counter() - start)
    out["expert_in_process_eps"] = local
    rows.append(Row("rollouts", "expert, in process, no wire (episodes/s)", local, "ep/s"))

    with ServerProcess("metasre", store=True) as meta, SyncClient(meta.address) as client:
        players: dict[str, Callable[..., Any]] = {
            "expert": solo_player(lambda seed: ExpertPolicy(), "expert"),
            "team": team_player(),
        }
        # warm-up: one episode of each
        for player in players.values():
            run_rollout(client, player, plan[:2], parallel=2)
        for name, player in players.items():
            for parallel in sizes.rollout_parallel:
                report = run_rollout(client, player, plan, parallel=parallel, agent=name)
                graded = sum(r.graded for r in report.results)
                eps = graded / report.wall_seconds
                out[f"{name}_p{parallel}"] = {
                    "episodes": len(report.results),
                    "graded": graded,
                    "resolved": sum(r.resolved for r in report.results),
                    "wall_s": report.wall_seconds,
                    "graded_eps": eps,
                    "errors": [r.error for r in report.results if r.error][:3],
                }
                # The target is for both players, at the highest parallelism measured.
                best = parallel == max(sizes.rollout_parallel)
                rows.append(
                    Row(
                        "rollouts",
                        f"{name}, parallel {parallel}: graded episodes/s ({graded}/{len(plan)})",
                        eps,
                        "ep/s",
                        local if name == "expert" else None,
                        eps / local if name == "expert" else None,
                        ">= 20 ep/s" if best else "",
                        eps >= 20 if best else None,
                    )
                )
    return rows, out


__all__ = [
    "CHEAP_SCENARIO",
    "Sizes",
    "call_loop",
    "cheap_calls",
    "reset",
    "rollouts",
    "test_runs",
    "transport",
]
