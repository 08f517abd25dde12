"""Calls per second through the gRPC server with no store, the SQLite store and PostgreSQL.

python bench/bench_store.py [--sessions 1 16] [--calls 200] [--rounds 3] [--no-postgres]

Each session has one agent calling get_alerts over CallTool as fast as its answers come back;
sessions run concurrently. With a store, every answer waits for its commit: SQLite with
synchronous=FULL, PostgreSQL with synchronous_commit=on and fsync on (a throwaway cluster of
its own, on a Unix socket in a temp folder, started as in tests/service/postgres_cluster.py).
Client and server share this process: "CPU ms/call" is this process's CPU (client + server)
per call, and "PG CPU" the PostgreSQL server processes' own. The ways alternate within each
round, and the best round of each is kept (other engineers' work on the two cores only slows).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import grpc
import structlog

from metasre.service import Limits, ServerConfig, build_server
from metasre.service.server import prepare_sandbox
from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2, control_pb2_grpc

SCENARIO = "meta-sre/migration-cascade-v3"  # 40 steps
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


async def run(
    store: Path | str | None,
    sessions: int,
    calls: int,
    other_cpu: Callable[[], float] = lambda: 0.0,
) -> tuple[float, int, float, float]:
    """(calls/s, store commits, CPU seconds of this process and of `other_cpu`) over the calls.

    Only the calls are timed: not the server's start (nor the store's schema), nor its stop.
    """
    url = store if isinstance(store, str) else None
    path = store if isinstance(store, Path) else None
    limits = Limits(max_sessions=1024)
    config = ServerConfig(port=0, limits=limits, store_path=path, store_url=url)
    server = await build_server(config)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            agent = agent_pb2_grpc.AgentServiceStub(channel)

            async def play() -> None:
                done = 0
                while done < calls:
                    created = await control.CreateSession(
                        control_pb2.CreateSessionRequest(
                            scenario_id=SCENARIO, seats=[common_pb2.SeatConfig(agent_id="a")]
                        )
                    )
                    sid, token = created.session.session_id, created.tokens[0].join_token
                    for _ in range(min(35, calls - done)):
                        await agent.CallTool(
                            agent_pb2.CallToolRequest(
                                session_id=sid,
                                token=token,
                                call=agent_pb2.ToolCall(tool="get_alerts"),
                            )
                        )
                        done += 1
                    await control.CloseSession(
                        control_pb2.CloseSessionRequest(session_id=sid),
                        metadata=(("authorization", f"Bearer {created.owner_token}"),),
                    )

            commits = server.store.commits if server.store else 0
            cpu, other = time.process_time(), other_cpu()
            start = time.perf_counter()
            await asyncio.gather(*(play() for _ in range(sessions)))
            elapsed = time.perf_counter() - start
            cpu, other = time.process_time() - cpu, other_cpu() - other
            commits = (server.store.commits if server.store else 0) - commits
    finally:
        await server.stop(0.5)
    return sessions * calls / elapsed, commits, cpu, other


def postgres_cpu_seconds(data: Path) -> float:
    """CPU seconds of a cluster's postmaster and its children (live ones and reaped ones)."""
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    total = 0.0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue  # ended meanwhile: its time is in the postmaster's children's
        ppid, utime, stime, cutime, cstime = (int(fields[i]) for i in (1, 11, 12, 13, 14))
        if int(pid) == postmaster:
            total += utime + stime + cutime + cstime
        elif ppid == postmaster:
            total += utime + stime
    return total / CLOCK_TICKS


class Cluster:
    """A throwaway PostgreSQL cluster (fsync on, as in production): fresh databases, its CPU."""

    def __init__(self, stack: ExitStack) -> None:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from tests.service.postgres_cluster import running_cluster

        self._pg = stack.enter_context(running_cluster(fsync=True))

    def new_database(self) -> str:
        return str(self._pg.new_database())

    def cpu_seconds(self) -> float:
        return postgres_cpu_seconds(self._pg.folder / "data")


def postgres_installed() -> bool:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.service.postgres_cluster import postgres_bin

    return postgres_bin() is not None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--calls", type=int, default=200, help="calls per concurrent agent")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the ways")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite and no store only")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    prepare_sandbox()
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        asyncio.run(run(None, 1, 50))  # warm: imports, the scenario's first load, gRPC's start
        pg = None
        if not args.no_postgres and postgres_installed():
            pg = Cluster(stack)
        elif not args.no_postgres:
            print("PostgreSQL is not installed: SQLite and no store only", file=sys.stderr)
        print(
            "| agents | store | calls/s | commits per 100 calls | CPU ms/call (this process)"
            " | PG CPU ms/call |\n| ---: | --- | ---: | ---: | ---: | ---: |"
        )
        for sessions in args.sessions:
            calls = sessions * args.calls
            best: dict[str, tuple[float, int, float, float]] = {}
            for r in range(args.rounds):
                ways: list[tuple[str, Path | str | None]] = [
                    ("none", None),
                    ("SQLite", Path(tmp) / f"b{sessions}-{r}.db"),
                ]
                if pg is not None:
                    ways.append(("PostgreSQL", pg.new_database()))
                for label, store in ways:
                    watch = pg.cpu_seconds if pg is not None and isinstance(store, str) else None
                    measured = asyncio.run(run(store, sessions, args.calls, watch or (lambda: 0.0)))
                    if label not in best or measured[0] > best[label][0]:
                        best[label] = measured
            for label, (rate, commits, cpu, pg_cpu) in best.items():
                print(
                    f"| {sessions} | {label} | {rate:.0f} | {100 * commits / calls:.1f} | "
                    f"{1000 * cpu / calls:.2f} | {1000 * pg_cpu / calls:.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
