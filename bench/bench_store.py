"""Calls per second through the gRPC server with and without the trajectory store.

python bench/bench_store.py [--sessions 1 16] [--calls 200]

Each session has one agent calling get_alerts over CallTool as fast as its answers come back;
sessions run concurrently. With the store, every answer waits for its commit (synchronous=FULL).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import time
from pathlib import Path

import grpc
import structlog

from metasre.service import Limits, ServerConfig, build_server
from metasre.service.server import prepare_sandbox
from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2, control_pb2_grpc

SCENARIO = "meta-sre/migration-cascade-v2"  # 40 steps


async def run(store: Path | None, sessions: int, calls: int) -> tuple[float, int]:
    config = ServerConfig(port=0, limits=Limits(max_sessions=1024), store_path=store)
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
            start = time.perf_counter()
            await asyncio.gather(*(play() for _ in range(sessions)))
            elapsed = time.perf_counter() - start
            commits = (server.store.commits if server.store else 0) - commits
    finally:
        await server.stop(0.5)
    return sessions * calls / elapsed, commits


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--calls", type=int, default=200, help="calls per concurrent agent")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    prepare_sandbox()
    with tempfile.TemporaryDirectory() as tmp:
        for sessions in args.sessions:
            for label, store in (("no store", None), ("store", Path(tmp) / f"b{sessions}.db")):
                rate, commits = asyncio.run(run(store, sessions, args.calls))
                calls = sessions * args.calls
                extra = f", {commits} commits for {calls} calls" if store else ""
                print(f"{sessions:>3} concurrent agents, {label:<8}: {rate:7.0f} calls/s{extra}")


if __name__ == "__main__":
    main()
