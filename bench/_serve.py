"""A server for the benchmarks, in its own process: `python -m bench._serve metasre|echo`.

Prints one JSON line with the address and pid once it serves, then serves until its stdin
closes. `echo` is a no-op bidirectional stream on the same grpc.aio stack and the same message
types as AgentService.Connect: a join gets an empty Joined, a call gets an empty ToolResult
with its call id. `echo --fanout` also sends what META-SRE's protocol sends for each call of a
session of N seats under SHARED rewards: an AppliedCall to each of the N-1 other streams that
joined with the same session id, and a RewardUpdate to every stream of it (6 messages for 3
seats, against the plain echo's 1); still no simulation and no store. A stream that joins with
StreamOptions.batch_events gets its two as one EventBatch, as META-SRE sends them (3 messages
a call for 3 seats). With `--profile FILE`
the server runs under cProfile and writes the stats there when it stops. With `--trace` (see
`bench._trace`) it times calls and samples its event loop's lag.

Lines on stdin are commands; those with an answer print it as one JSON line:

- `trace-reset` starts a trace window; `trace` answers with its summary;
- `gc-collect` runs a full garbage collection and answers how long it stopped the loop;
- `gc-freeze` does the same, then freezes every object left (`gc.freeze()`): a diagnostic
  that shows what the server's full collections cost by taking them away;
- `gc-threshold A B C` sets the collector's thresholds (an experiment);
- `gc-census` answers how many objects the collector tracks, and of which types;
- `gc-garbage` unfreezes, collects, and answers which types the cyclic garbage held (what
  closed sessions left for the GC freezer's reclaim), then freezes again.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import importlib
import json
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import structlog

from bench._trace import Tracer
from metasre.v1 import agent_pb2, common_pb2

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


async def _stdin_closed(tracer: Tracer | None = None) -> None:
    """Until stdin closes, answering the commands on it (see the module docstring)."""
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        answer = _command(line.split(), tracer)
        if answer is not None:
            print(json.dumps(answer), flush=True)


def _command(words: list[str], tracer: Tracer | None) -> dict[str, Any] | None:
    """Run one command; its answer, for those that have one."""
    command = words[0] if words else ""
    if command == "trace-reset":
        if tracer is not None:
            tracer.reset()
        return None
    if command == "trace":
        return tracer.report() if tracer is not None else {}
    if command == "gc-threshold":
        gc.set_threshold(*(int(x) for x in words[1:]))
        return None
    if command == "gc-census":
        return _census()
    if command == "gc-garbage":
        gc.unfreeze()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
            garbage = Counter(type(o).__qualname__ for o in gc.garbage)
            total = len(gc.garbage)
            gc.garbage.clear()
        finally:
            gc.set_debug(0)
        gc.collect()
        gc.freeze()
        return {"garbage": total, "top": garbage.most_common(40)}
    if command in ("gc-collect", "gc-freeze"):
        start = time.perf_counter()
        found = gc.collect()
        if command == "gc-freeze":
            gc.freeze()
        ms = (time.perf_counter() - start) * 1000
        return {"ms": ms, "collected": found, "frozen": gc.get_freeze_count()}
    return {"error": f"unknown command {command!r}"} if command else None


def _census(top: int = 40) -> dict[str, Any]:
    """How many objects the garbage collector tracks, and the commonest types among them."""
    objects = gc.get_objects()
    types = Counter(type(o).__qualname__ for o in objects)
    refs: Counter[str] = Counter()
    for o in objects:
        refs[type(o).__qualname__] += len(gc.get_referents(o))
    return {
        "tracked": len(objects),
        "frozen": gc.get_freeze_count(),
        "top": types.most_common(top),
        "references": sum(refs.values()),
        "top_references": refs.most_common(top),
    }


_Out = asyncio.Queue[agent_pb2.ConnectResponse | None]


class _FanoutEcho:
    """The echo with META-SRE's per-call fan-out (see the module docstring)."""

    def __init__(self) -> None:
        self._groups: dict[str, list[tuple[_Out, bool]]] = {}

    async def connect(
        self, requests: AsyncIterator[agent_pb2.ConnectRequest], context: Any
    ) -> AsyncIterator[agent_pb2.ConnectResponse]:
        out: _Out = asyncio.Queue()
        group: list[tuple[_Out, bool]] = []
        me: tuple[_Out, bool] = (out, False)
        joined = False

        async def read() -> None:
            nonlocal group, joined
            async for request in requests:
                kind = request.WhichOneof("request")
                if kind == "join" and not joined:
                    joined = True
                    group = self._groups.setdefault(request.join.session_id, [])
                    me = (out, request.join.options.batch_events)
                    group.append(me)
                    out.put_nowait(agent_pb2.ConnectResponse(joined=agent_pb2.Joined(agent_id="e")))
                elif kind == "call":
                    call_id = request.call.call_id
                    result = agent_pb2.ConnectResponse(
                        call_id=call_id, result=agent_pb2.ToolResult(call_id=call_id)
                    )
                    applied = agent_pb2.ConnectResponse(
                        applied=common_pb2.AppliedCall(call_id=call_id, agent_id="e", tool="echo")
                    )
                    reward = agent_pb2.ConnectResponse(
                        reward=common_pb2.RewardUpdate(agent_id="e", total=0.0)
                    )
                    for peer, batch in group:
                        told = (result if peer is out else applied, reward)
                        if batch:  # as META-SRE sends a step's events to a batching stream
                            peer.put_nowait(
                                agent_pb2.ConnectResponse(batch=agent_pb2.EventBatch(events=told))
                            )
                        else:
                            for message in told:
                                peer.put_nowait(message)
            out.put_nowait(None)

        reader = asyncio.create_task(read())
        try:
            while (item := await out.get()) is not None:
                yield item
        finally:
            reader.cancel()
            if me in group:
                group.remove(me)


async def serve_echo(fanout: bool = False) -> None:
    server = grpc.aio.server(options=OPTIONS)
    handler = grpc.method_handlers_generic_handler(
        "metasre.bench.Echo",
        {
            "Connect": grpc.stream_stream_rpc_method_handler(
                _FanoutEcho().connect if fanout else _echo,
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


def _one_owner(limits: type) -> dict[str, int]:
    """One client holds every session of a benchmark: no per-owner quota below the server's.

    Empty for a tree from before the quota (the side-by-side runs serve earlier trees).
    """
    names = {f.name for f in dataclasses.fields(limits)}
    return {"max_sessions_per_owner": 1 << 30} if "max_sessions_per_owner" in names else {}


async def serve_metasre(
    store: Path | None,
    max_sessions: int,
    tracer: Tracer | None,
    synchronous: str | None = None,
    manage_gc: bool = True,
) -> None:
    from metasre.service import Limits, ServerConfig, build_server

    if tracer is not None:
        tracer.install()
        tracer.start_lag_sampler()

    config = ServerConfig(
        port=0,
        limits=Limits(max_sessions=max_sessions, max_agents_per_session=16, **_one_owner(Limits)),
        store_path=store,
        grace_seconds=1.0,
        manage_gc=manage_gc,  # as `metasre serve` does
    )
    server = await build_server(config)
    if synchronous is not None and server.store is not None:
        # An experiment: the store's writer opens its connection on the first write, with this.
        server.store._synchronous = synchronous  # type: ignore[assignment]
    await server.start()
    print(json.dumps({"address": server.address, "pid": os.getpid()}), flush=True)
    await _stdin_closed(tracer)
    await server.stop(1.0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=("metasre", "echo"))
    parser.add_argument("--store", type=Path)
    parser.add_argument("--max-sessions", type=int, default=4096)
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--trace", action="store_true", help="time calls, sample loop lag")
    parser.add_argument("--synchronous", choices=("FULL", "NORMAL", "OFF"), help="store's fsync")
    parser.add_argument("--fanout", action="store_true", help="echo: META-SRE's fan-out")
    parser.add_argument("--no-manage-gc", action="store_true", help="the collector's defaults")
    args = parser.parse_args()
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    if args.kind == "metasre":
        from metasre.service.server import prepare_sandbox

        prepare_sandbox()  # the fork server starts before any gRPC thread
        tracer = Tracer() if args.trace else None
        coro = serve_metasre(
            args.store, args.max_sessions, tracer, args.synchronous, not args.no_manage_gc
        )
    else:
        coro = serve_echo(args.fanout)
    # On the loop `metasre serve` runs (a tree from before `run_server`: asyncio's).
    run = getattr(importlib.import_module("metasre.service.server"), "run_server", asyncio.run)
    if args.profile is None:
        run(coro)
        return
    import cProfile

    profile = cProfile.Profile()
    profile.enable()
    try:
        run(coro)
    finally:
        profile.disable()
        profile.dump_stats(args.profile)


if __name__ == "__main__":
    main()
