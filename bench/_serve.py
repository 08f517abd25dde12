"""A server for the benchmarks, in its own process: `python -m bench._serve metasre|echo`.

Prints one JSON line with the address and pid once it serves, then serves until its stdin
closes. `echo` is a no-op bidirectional stream on the same grpc.aio stack and the same message
types as AgentService.Connect: a join gets an empty Joined, a call gets an empty ToolResult
with its call id. With `--profile FILE` the server runs under cProfile and writes the stats
there when it stops.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import structlog

from metasre.v1 import agent_pb2

ECHO_METHOD = "/metasre.bench.Echo/Connect"
OPTIONS = [("grpc.so_reuseport", 0)]


async def _echo(
    requests: AsyncIterator[agent_pb2.ConnectRequest], context: Any
) -> AsyncIterator[agent_pb2.ConnectResponse]:
    async for request in requests:
        kind = request.WhichOneof("request")
        if kind == "join":
            yield agent_pb2.ConnectResponse(joined=agent_pb2.Joined(agent_id="echo"))
        elif kind == "call":
            call_id = request.call.call_id
            yield agent_pb2.ConnectResponse(
                call_id=call_id, result=agent_pb2.ToolResult(call_id=call_id)
            )


async def _stdin_closed() -> None:
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)


async def serve_echo() -> None:
    server = grpc.aio.server(options=OPTIONS)
    handler = grpc.method_handlers_generic_handler(
        "metasre.bench.Echo",
        {
            "Connect": grpc.stream_stream_rpc_method_handler(
                _echo,
                request_deserializer=agent_pb2.ConnectRequest.FromString,
                response_serializer=agent_pb2.ConnectResponse.SerializeToString,
            )
        },
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(json.dumps({"address": f"127.0.0.1:{port}", "pid": os.getpid()}), flush=True)
    await _stdin_closed()
    await server.stop(0.5)


async def serve_metasre(store: Path | None, max_sessions: int) -> None:
    from metasre.service import Limits, ServerConfig, build_server

    config = ServerConfig(
        port=0,
        limits=Limits(max_sessions=max_sessions, max_agents_per_session=16),
        store_path=store,
        grace_seconds=1.0,
    )
    server = await build_server(config)
    await server.start()
    print(json.dumps({"address": server.address, "pid": os.getpid()}), flush=True)
    await _stdin_closed()
    await server.stop(1.0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=("metasre", "echo"))
    parser.add_argument("--store", type=Path)
    parser.add_argument("--max-sessions", type=int, default=4096)
    parser.add_argument("--profile", type=Path)
    args = parser.parse_args()
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
    )
    if args.kind == "metasre":
        from metasre.service.server import prepare_sandbox

        prepare_sandbox()  # the fork server starts before any gRPC thread
        coro = serve_metasre(args.store, args.max_sessions)
    else:
        coro = serve_echo()
    if args.profile is None:
        asyncio.run(coro)
        return
    import cProfile

    profile = cProfile.Profile()
    profile.enable()
    try:
        asyncio.run(coro)
    finally:
        profile.disable()
        profile.dump_stats(args.profile)


if __name__ == "__main__":
    main()
