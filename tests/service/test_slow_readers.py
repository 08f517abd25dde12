"""A client that stops reading costs the server nothing and does not keep its seat.

Real streams on a real server: one seat joins and then neither reads nor sends while a teammate
plays on. Its stream's buffer stays within its limit (the stream stops following the log, which
holds every event anyway), the stream is cut off with RESOURCE_EXHAUSTED / SLOW_READER once the
buffer has stayed full too long, and the seat is let go at once and kept for a resume. A seat
that is also silent is ended by the idle limit, however much is waiting to be sent to it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from grpc_status import rpc_status

from metasre.service import Limits, ServerConfig, build_server
from metasre.service.server import MetasreServer
from metasre.service.wire.agent import AgentStream
from metasre.v1 import agent_pb2, agent_pb2_grpc, control_pb2, control_pb2_grpc

from .conftest import TIMEOUT, AgentClient, create, details, owned_channel, struct

BUFFER = 8
"""The stream buffer limit these tests run with: small, so a few calls fill it."""
# No BDP probing: the client's receive window stays at its initial size, so a client that does
# not read stops the server's writes after a few messages instead of megabytes of them.
SMALL_WINDOW = (("grpc.http2.bdp_probe", 0),)


@contextlib.asynccontextmanager
async def serving(limits: Limits) -> AsyncIterator[tuple[MetasreServer, grpc.aio.Channel]]:
    server = await build_server(ServerConfig(port=0, limits=limits, grace_seconds=0.5))
    await server.start()
    channel = owned_channel(server.address)
    try:
        yield server, channel
    finally:
        await channel.close()
        await server.stop(0.2)


def stalled(channel_address: str) -> tuple[grpc.aio.Channel, Any, asyncio.Queue[Any]]:
    """A Connect stream on its own channel whose client will read nothing."""
    channel = grpc.aio.insecure_channel(channel_address, options=SMALL_WINDOW)
    requests: asyncio.Queue[Any] = asyncio.Queue()

    async def iterate() -> AsyncIterator[agent_pb2.ConnectRequest]:
        while (request := await requests.get()) is not None:
            yield request

    call = agent_pb2_grpc.AgentServiceStub(channel).Connect(iterate())
    return channel, call, requests


def streams_of(server: MetasreServer) -> list[AgentStream]:
    return list(server._agents._streams)  # type: ignore[union-attr]


@dataclass
class Stalled:
    """A seat whose client joined and then read nothing, while its teammate played on."""

    joined: Any
    call: Any
    calls: int
    token: str
    """The stalled seat's join token."""
    """The teammate's calls until the server let the stalled seat go."""


@contextlib.asynccontextmanager
async def stalled_seat(
    server: MetasreServer, channel: grpc.aio.Channel, sample: Any = None
) -> AsyncIterator[Stalled]:
    """Seat "a" joins and stalls; "b" makes big reads until the server lets "a"'s seat go
    (state, polled), calling `sample(streams)` at each look; the stalled call ends with it."""
    control = control_pb2_grpc.ControlServiceStub(channel)
    agent = agent_pb2_grpc.AgentServiceStub(channel)
    created = await create(control, ("a", "b"))
    sid = created.session.session_id
    a_channel, a_call, a_requests = stalled(server.address)
    a_requests.put_nowait(
        agent_pb2.ConnectRequest(
            join=agent_pb2.JoinSeat(session_id=sid, join_token=created.tokens[0].join_token)
        )
    )
    joined = await asyncio.wait_for(a_call.read(), TIMEOUT)
    stop = asyncio.Event()
    play = asyncio.create_task(
        teammate_plays(control, agent, sid, created.tokens[1].join_token, stop)
    )
    try:
        while await seat_connected(control, sid, 0):
            if sample is not None:
                sample(streams_of(server))
            assert not play.done(), play
            await asyncio.sleep(0.02)
    finally:
        stop.set()
        calls = await asyncio.wait_for(play, TIMEOUT)
    try:
        yield Stalled(joined, a_call, calls, created.tokens[0].join_token)
    finally:
        a_requests.put_nowait(None)
        await a_channel.close()


async def read_to_end(call: Any) -> grpc.aio.AioRpcError:
    """What a stalled client reads at last: what was sent, then the status that ended it."""
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        while (await asyncio.wait_for(call.read(), TIMEOUT)) is not grpc.aio.EOF:
            pass
    return ended.value


async def teammate_plays(
    control: Any, agent: Any, sid: str, token: str, until: asyncio.Event
) -> int:
    """Big reads as fast as they are answered (a reset when the budget runs out)."""
    calls = 0
    while not until.is_set():
        calls += 1
        request = agent_pb2.CallToolRequest(
            session_id=sid,
            token=token,
            call=agent_pb2.ToolCall(
                call_id=f"b{calls}",
                tool="read_logs",
                args=struct({"service": "payment-service", "lines": 200, "since_minutes": 240}),
            ),
        )
        try:
            await agent.CallTool(request)
        except grpc.aio.AioRpcError as exc:
            reason = details(rpc_status.from_call(exc))[0].reason  # type: ignore[arg-type]
            assert reason == "EPISODE_OVER", reason
            await control.ResetSession(control_pb2.ResetSessionRequest(session_id=sid))
    return calls


async def seat_connected(control: Any, sid: str, index: int) -> bool:
    info = await control.GetSession(control_pb2.GetSessionRequest(session_id=sid))
    return bool(info.session.seats[index].connected)


async def test_a_stalled_reader_is_bounded_cut_off_and_can_resume():
    limits = Limits(
        stream_buffer_messages=BUFFER,
        slow_reader_seconds=0.5,
        seat_grace_seconds=30,
        idle_seat_seconds=600,
    )
    largest = 0

    def sample(streams: list[AgentStream]) -> None:
        # Meanwhile the stalled stream's buffer never holds more than its limit and a reply.
        nonlocal largest
        largest = max([largest, *(stream._out.qsize() for stream in streams)])

    async with (
        serving(limits) as (server, channel),
        stalled_seat(server, channel, sample) as seat,
    ):
        assert seat.calls > BUFFER
        assert largest <= BUFFER + 1

        # The seat is kept for its agent: the resume token takes it back at once.
        back = AgentClient(channel)
        back.send(
            agent_pb2.ConnectRequest(
                resume=agent_pb2.ResumeSeat(
                    session_id=seat.joined.joined.session.session_id,
                    resume_token=seat.joined.joined.resume_token,
                )
            )
        )
        await back.expect("joined")
        back.close()

        # The stalled client, reading at last, gets what was sent, then the reason it was cut.
        cut = await read_to_end(seat.call)
        assert cut.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        status = rpc_status.from_call(cut)
        assert status is not None
        info = details(status)[0]
        assert info.reason == "SLOW_READER"
        assert info.metadata["stream_buffer_messages"] == str(BUFFER)
        assert "resume" in (cut.details() or "")


async def test_large_messages_are_bounded_by_bytes_before_the_message_count():
    """Big reads (about 30 KB each) fill a 128 KB byte limit long before 10,000 messages."""
    limit = 128 * 1024
    limits = Limits(
        stream_buffer_messages=10_000,
        stream_buffer_bytes=limit,
        slow_reader_seconds=0.5,
        seat_grace_seconds=30,
    )
    most_bytes = most_messages = 0

    def sample(streams: list[AgentStream]) -> None:
        nonlocal most_bytes, most_messages
        for stream in streams:
            most_bytes = max(most_bytes, stream._queued_bytes)
            most_messages = max(most_messages, stream._out.qsize())

    async with serving(limits) as (server, channel):
        control = control_pb2_grpc.ControlServiceStub(channel)
        info = await control.GetServerInfo(control_pb2.GetServerInfoRequest())
        assert info.limits.stream_buffer_bytes == limit
        async with stalled_seat(server, channel, sample) as seat:
            assert 0 < most_bytes < limit + 64 * 1024  # the limit, and at most one message over
            assert most_messages < 100
            status = rpc_status.from_call(await read_to_end(seat.call))
            assert status is not None
            assert details(status)[0].metadata["stream_buffer_bytes"] == str(limit)


async def test_the_idle_limit_ends_a_silent_stalled_stream_whatever_is_queued():
    limits = Limits(
        stream_buffer_messages=10_000,  # never full: only the idle limit can end it
        slow_reader_seconds=600,
        idle_seat_seconds=0.6,
    )
    async with (
        serving(limits) as (server, channel),
        stalled_seat(server, channel) as seat,
    ):
        # Freed, not kept: a join takes it at once.
        again = AgentClient(channel)
        sid = seat.joined.joined.session.session_id
        assert (await again.join(sid, seat.token)).agent_id == "a"
        again.close()
        ended = await read_to_end(seat.call)
        assert ended.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        status = rpc_status.from_call(ended)
        assert status is not None and details(status)[0].reason == "SEAT_IDLE"
