"""Dropped streams: the seat waits for its agent, a resume replays what it missed, and a call
repeated under the same call_id (after a reconnect, or after a restart) is applied once.

Real servers on 127.0.0.1:0; a drop is a real cancelled Connect call (RST_STREAM on the wire).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from metasre.service import Limits, ServerConfig
from metasre.service.core.errors import CallIdReusedError
from metasre.service.registry import Registry
from metasre.service.store.sqlite import TrajectoryStore
from metasre.v1 import agent_pb2, agent_pb2_grpc, control_pb2

from .conftest import AgentClient, create, struct

GRACE = 0.6


@pytest.fixture
def config(tmp_path: Path) -> ServerConfig:
    return ServerConfig(
        port=0,
        limits=Limits(turn_timeout_seconds=10.0, seat_grace_seconds=GRACE),
        grace_seconds=0.5,
        store_path=tmp_path / "store.db",
    )


def resume_request(sid: str, token: str, after: int) -> agent_pb2.ConnectRequest:
    return agent_pb2.ConnectRequest(
        resume=agent_pb2.ResumeSeat(session_id=sid, resume_token=token, after_sequence=after)
    )


def join_request(sid: str, token: str) -> agent_pb2.ConnectRequest:
    return agent_pb2.ConnectRequest(join=agent_pb2.JoinSeat(session_id=sid, join_token=token))


async def drop(client: AgentClient) -> None:
    """Cancel the stream as a crashed client or a broken connection would."""
    client.call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await client.call.read()


def session_kept(server, sid: str, agent: str) -> bool:
    session, _ = server.registry.get(sid)
    return bool(session.seat(agent).kept)


async def wait_released(server, sid: str, agent: str) -> None:
    session, _ = server.registry.get(sid)
    seat = session.seat(agent)
    for _ in range(200):
        if seat.holder is None:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the server never noticed the dropped stream")


async def test_a_dropped_seat_is_kept_for_the_grace_period_then_freed(server, channel, control):
    info = await control.GetServerInfo(control_pb2.GetServerInfoRequest())
    assert info.limits.seat_grace_seconds == GRACE  # clients can plan their reconnects
    created = await create(control, ("a", "b"))
    sid, join_a = created.session.session_id, created.tokens[0].join_token
    a = AgentClient(channel)
    joined = await a.join(sid, join_a)
    await a.result_or_error(a.tool("get_alerts"))
    await drop(a)
    await wait_released(server, sid, "a")

    # Within the grace period the seat waits for its agent: another stream's join, with the
    # agent's own join token, takes it back as a resume would (it replays from the start) ...
    thief = AgentClient(channel)
    assert (await thief.join(sid, join_a)).agent_id == "a"
    await drop(thief)
    await wait_released(server, sid, "a")
    assert session_kept(server, sid, "a")
    # ... the session is not idle however long ago its last call was ...
    session, _ = server.registry.get(sid)
    session.last_active -= 10_000
    await server.registry.reap_idle()
    assert server.registry.get(sid)[0] is session
    # ... and the resume token takes the seat back at once.
    back = AgentClient(channel)
    back.send(resume_request(sid, joined.resume_token, 0))
    await back.expect("joined")
    await drop(back)
    await wait_released(server, sid, "a")

    # Once the grace period is over, the seat is free for a join again.
    seat = session.seat("a")
    while not seat.left:  # the grace period's end, awaited as state (the test's TIMEOUT bounds it)
        await asyncio.sleep(0.02)
    rejoined = AgentClient(channel)
    assert (await rejoined.join(sid, join_a)).agent_id == "a"
    # A stream that ends in order (the client half-closes) frees its seat at once.
    rejoined.close()
    await wait_released(server, sid, "a")
    assert session.seat("a").left and not session.seat("a").kept
    again = AgentClient(channel)
    assert (await again.join(sid, join_a)).agent_id == "a"
    again.close()


async def test_a_resume_delivers_everything_missed_in_order(channel, control):
    created = await create(control, ("a", "b"))
    sid = created.session.session_id
    a, b = AgentClient(channel), AgentClient(channel)
    joined = await a.join(sid, created.tokens[0].join_token)
    await b.join(sid, created.tokens[1].join_token)
    last = (await a.result_or_error(a.tool("get_alerts"))).sequence
    await drop(a)
    missed = [
        ("read_logs", {"service": "payment-service"}),
        ("send_message", {"text": "it is the deploy", "to": ["a"]}),
        ("check_dependencies", {}),
        ("describe_service", {"service": "payment-service"}),
    ]
    for tool, args in missed:
        assert (await b.result_or_error(b.tool(tool, args))).WhichOneof("response") == "result"

    again = AgentClient(channel)
    again.agent_id = "a"
    again.send(resume_request(sid, joined.resume_token, last))
    await again.expect("joined")
    mine = again.tool("get_alerts", call_id="after-resume")
    await again.result_or_error(mine)
    events = [m for m in again.received if m.sequence]
    sequences = [m.sequence for m in events]
    assert sequences == sorted(sequences) and len(set(sequences)) == len(sequences)
    assert sequences[0] > last
    heard = [(m.applied.tick, m.applied.tool) for m in events if m.HasField("applied")]
    assert heard == [(i + 2, tool) for i, (tool, _) in enumerate(missed)]
    messages = [m.message.text for m in events if m.HasField("message")]
    assert messages == ["it is the deploy"]
    result = next(m for m in events if m.HasField("result"))
    assert (result.call_id, result.result.tick) == ("after-resume", len(missed) + 2)
    # Everything between the last event seen and the new call, nothing before or skipped.
    store_events = [
        e
        for e in (
            await control.GetTrajectory(control_pb2.GetTrajectoryRequest(session_id=sid))
        ).events
        if e.sequence > last
    ]
    visible = {"applied", "message", "turn", "started", "ended"}
    expected = [e.sequence for e in store_events if e.WhichOneof("event") in visible]
    assert [s for s in sequences if s in expected] == expected
    again.close()
    b.close()


async def test_a_repeated_call_id_after_a_reconnect_is_answered_once_and_applied_once(
    server, channel, control
):
    created = await create(control, ("a",))
    sid, token = created.session.session_id, created.tokens[0].join_token
    a = AgentClient(channel)
    joined = await a.join(sid, token)
    a.agent_id = "a"
    first = await a.result_or_error(a.tool("read_logs", {"service": "payment-service"}, "c-1"))
    # A slow call, and the stream drops while it is being applied.
    a.tool("run_tests", {"suite": "unit"}, "c-2")
    await asyncio.sleep(0.02)
    await drop(a)

    again = AgentClient(channel)
    again.agent_id = "a"
    again.send(resume_request(sid, joined.resume_token, first.sequence))
    await again.expect("joined")
    # Both retried: c-1 was answered before the drop, c-2 maybe not. Neither runs again.
    again.tool("read_logs", {"service": "payment-service"}, "c-1")
    again.tool("run_tests", {"suite": "unit"}, "c-2")
    replies = {}
    while len(replies) < 2:
        msg = await again.receive()
        if msg.WhichOneof("response") == "result":
            assert msg.call_id not in replies, "a result was sent twice"
            replies[msg.call_id] = msg
    assert replies["c-1"].result.tick == first.result.tick == 1
    assert replies["c-1"].result.text == first.result.text
    assert replies["c-1"].sequence == 0  # a repeat, not a new event
    assert replies["c-2"].result.tick == 2
    # The same id once more, on the same stream, after its result: the same answer again.
    again.tool("run_tests", {"suite": "unit"}, "c-2")
    repeat = await again.result_or_error("c-2")
    assert repeat.result.tick == 2
    # Over CallTool too (any of the seat's tokens).
    stub = agent_pb2_grpc.AgentServiceStub(channel)
    request = agent_pb2.CallToolRequest(
        session_id=sid,
        token=joined.resume_token,
        call=agent_pb2.ToolCall(call_id="c-2", tool="run_tests", args=struct({"suite": "unit"})),
    )
    assert (await stub.CallTool(request)).result.tick == 2
    # The id with another call is refused, not answered with c-2's result (issue 28).
    request.call.args.Clear()
    request.call.tool = "get_alerts"
    with pytest.raises(grpc.aio.AioRpcError) as reused:
        await stub.CallTool(request)
    assert reused.value.code() == grpc.StatusCode.ALREADY_EXISTS
    fresh = await again.result_or_error(again.tool("get_alerts", call_id="c-3"))
    assert fresh.result.tick == 3

    store = server.store
    assert store is not None
    ids = [e.payload["call_id"] for e in store.events(sid) if e.kind == "applied"]
    assert ids == ["c-1", "c-2", "c-3"]
    again.close()


async def test_a_repeated_call_id_after_a_restart_is_answered_from_the_store(
    server, channel, control, config
):
    created = await create(control, ("a",))
    sid, token = created.session.session_id, created.tokens[0].join_token
    stub = agent_pb2_grpc.AgentServiceStub(channel)

    async def call(call_id: str) -> agent_pb2.ToolResult:
        request = agent_pb2.CallToolRequest(
            session_id=sid,
            token=token,
            call=agent_pb2.ToolCall(
                call_id=call_id, tool="read_logs", args=struct({"service": "payment-service"})
            ),
        )
        return (await stub.CallTool(request)).result

    original = await call("once")
    # A second server life on the same store (this one never closed the session).
    store = TrajectoryStore(config.store_path)
    registry = Registry(config.limits, None, store)
    try:
        assert await registry.recover() == 1
        session, coordinator = registry.get(sid)
        seat = session.seat_by_token(token)
        entry = await coordinator.submit(seat, "once", "read_logs", {"service": "payment-service"})
        assert entry.event.tick == original.tick and entry.event.text == original.text
        # Its id with other arguments: refused, not the original's result (issue 28).
        with pytest.raises(CallIdReusedError):
            await coordinator.submit(seat, "once", "read_logs", {"service": "x"})
        assert session.episode.tick == 1
        assert (await coordinator.submit(seat, "twice", "get_alerts", {})).event.tick == 2
    finally:
        await registry.drain()
        store.close()
