"""Server limits against a real server: idle seats and sessions, capacity, the ROUND_ROBIN clock.

Time limits are configured small (tenths of a second) and awaited through what the server itself
sends (a stream's end status, a watcher's end, TurnGranted), never by sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status

from metasre.service import Limits, ServerConfig, build_server
from metasre.service.server import MetasreServer
from metasre.v1 import (
    agent_pb2,
    common_pb2,
    control_pb2,
    control_pb2_grpc,
    watch_pb2,
    watch_pb2_grpc,
)

from .conftest import TIMEOUT, AgentClient, create, details, owned_channel

NOT_FOUND = grpc.StatusCode.NOT_FOUND


@contextlib.asynccontextmanager
async def serving(limits: Limits) -> AsyncIterator[tuple[MetasreServer, grpc.aio.Channel]]:
    server = await build_server(ServerConfig(port=0, limits=limits, grace_seconds=0.5))
    await server.start()
    try:
        async with owned_channel(server.address) as channel:
            yield server, channel
    finally:
        await server.stop(0.5)


async def assert_serving(channel: grpc.aio.Channel) -> None:
    reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def stream_failure(client: AgentClient) -> grpc.aio.AioRpcError:
    """Read the stream until the server ends it with an error status; that error."""
    with pytest.raises(grpc.aio.AioRpcError) as err:
        while True:
            await client.receive()
    return err.value


async def watch_until_closed(channel: grpc.aio.Channel, session_id: str) -> None:
    """Follow a session's log until the server closes the session (the watch then ends)."""
    watch = watch_pb2_grpc.WatchServiceStub(channel).WatchSession(
        watch_pb2.WatchSessionRequest(session_id=session_id)
    )
    while (await asyncio.wait_for(watch.read(), TIMEOUT)) is not grpc.aio.EOF:
        pass
    assert await watch.code() == grpc.StatusCode.OK


# -- idle seats ---------------------------------------------------------------------------------


async def test_a_silent_seat_is_ended_with_deadline_exceeded_and_can_be_resumed():
    idle = 0.3
    async with serving(Limits(idle_seat_seconds=idle)) as (_, channel):
        control = control_pb2_grpc.ControlServiceStub(channel)
        created = await create(control, ("a", "b"))
        sid = created.session.session_id
        # A joined agent that stops talking, and a stream that never even joins.
        silent = AgentClient(channel)
        joined = await silent.join(sid, created.tokens[0].join_token)
        first = await silent.result_or_error(silent.tool("get_alerts"))
        assert first.result.tick == 1
        mute = AgentClient(channel)
        started = time.monotonic()
        errors = await asyncio.gather(stream_failure(silent), stream_failure(mute))
        assert time.monotonic() - started >= idle * 0.8
        for err in errors:
            assert err.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            assert "no message for 0.3 s" in (err.details() or "")
            assert "resume" in (err.details() or "")
            status = rpc_status.from_call(err)
            assert status is not None and details(status)[0].reason == "SEAT_IDLE"

        # The seat is free again (GetSession says so) and its resume token takes it back.
        info = await control.GetSession(control_pb2.GetSessionRequest(session_id=sid))
        assert [s.connected for s in info.session.seats] == [False, False]
        back = AgentClient(channel)
        back.send(
            agent_pb2.ConnectRequest(
                resume=agent_pb2.ResumeSeat(
                    session_id=sid, resume_token=joined.resume_token, after_sequence=first.sequence
                )
            )
        )
        await back.expect("joined")
        back.agent_id = "a"
        # A new call id: a repeated one ("a-1") would get the original call's result.
        reply = await back.result_or_error(back.tool("get_alerts", call_id="after-resume"))
        assert reply.result.tick == 2
        back.close()
        await assert_serving(channel)


async def test_any_message_restarts_the_idle_seat_clock():
    idle = 0.4
    async with serving(Limits(idle_seat_seconds=idle)) as (_, channel):
        control = control_pb2_grpc.ControlServiceStub(channel)
        created = await create(control, ("a",))
        client = AgentClient(channel)
        await client.join(created.session.session_id, created.tokens[0].join_token)
        # Keep talking (empty requests: each is refused in-band, which changes nothing) for
        # two idle limits: the stream stays open because no gap reaches the limit.
        started = time.monotonic()
        while time.monotonic() - started < 2 * idle:
            client.send(agent_pb2.ConnectRequest())
            assert details((await client.expect("error")).error)[0].reason == "INVALID_REQUEST"
        reply = await client.result_or_error(client.tool("get_alerts"))
        assert reply.result.tick == 1
        client.close()


# -- idle sessions ------------------------------------------------------------------------------


async def test_an_idle_session_is_closed_and_later_calls_say_why():
    idle = 0.5  # the reaper looks every 0.5 s at the least
    async with serving(Limits(idle_session_seconds=idle)) as (_, channel):
        control = control_pb2_grpc.ControlServiceStub(channel)
        # `busy` has an agent connected; `idle_one` is made after it, so it has been idle no
        # longer than `busy` at any moment: when the reaper closes it, it has seen `busy` too.
        busy = await create(control, ("a",))
        agent = AgentClient(channel)
        await agent.join(busy.session.session_id, busy.tokens[0].join_token)
        idle_one = await create(control, ("x", "y"))
        sid = idle_one.session.session_id
        await watch_until_closed(channel, sid)

        # Control calls: NOT_FOUND, reason SESSION_IDLE, and a message that says what happened.
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await control.GetSession(control_pb2.GetSessionRequest(session_id=sid))
        assert err.value.code() == NOT_FOUND
        message = err.value.details() or ""
        assert sid in message and "idle" in message and "create a new session" in message
        status = rpc_status.from_call(err.value)
        assert status is not None and details(status)[0].reason == "SESSION_IDLE"
        # A join with the session's token: refused in-band, same reason, stream still usable.
        late = AgentClient(channel)
        late.send(
            agent_pb2.ConnectRequest(
                join=agent_pb2.JoinSeat(session_id=sid, join_token=idle_one.tokens[0].join_token)
            )
        )
        refused = await late.expect("error")
        assert refused.error.code == NOT_FOUND.value[0]
        assert details(refused.error)[0].reason == "SESSION_IDLE"
        late.close()
        # An id that never existed is still a plain SESSION_NOT_FOUND.
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await control.GetSession(control_pb2.GetSessionRequest(session_id="f" * 16))
        assert details(rpc_status.from_call(err.value))[0].reason == "SESSION_NOT_FOUND"

        # The session with a connected agent was left open and still plays.
        reply = await agent.result_or_error(agent.tool("get_alerts"))
        assert reply.result.tick == 1
        listed = await control.ListSessions(control_pb2.ListSessionsRequest())
        assert [s.session_id for s in listed.sessions] == [busy.session.session_id]
        # Once its agent leaves, it goes idle too, and is closed in turn.
        agent.close()
        await watch_until_closed(channel, busy.session.session_id)
        assert not (await control.ListSessions(control_pb2.ListSessionsRequest())).sessions
        # The server is up and takes new sessions.
        await create(control, ("a",))
        await assert_serving(channel)


# -- capacity -----------------------------------------------------------------------------------


async def test_sessions_and_seats_beyond_the_limits_are_resource_exhausted():
    async with serving(Limits(max_sessions=2, max_agents_per_session=2)) as (_, channel):
        control = control_pb2_grpc.ControlServiceStub(channel)
        info = await control.GetServerInfo(control_pb2.GetServerInfoRequest())
        assert (info.limits.max_sessions, info.limits.max_agents_per_session) == (2, 2)

        with pytest.raises(grpc.aio.AioRpcError) as err:
            await create(control, ("a", "b", "c"))
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert err.value.details() == (
            "3 seats asked for; a session on this server holds at most 2"
        )
        info_detail, violations = details(rpc_status.from_call(err.value))
        assert info_detail.reason == "SESSION_FULL"
        assert violations == [("seats", "at most 2 seats")]

        # Four creations at once with room for two: exactly two are opened.
        results = await asyncio.gather(
            *(create(control, ("a", "b")) for _ in range(4)), return_exceptions=True
        )
        opened = [r for r in results if isinstance(r, control_pb2.CreateSessionResponse)]
        refused = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
        assert (len(opened), len(refused)) == (2, 2)
        for r in refused:
            assert r.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "2 sessions, its limit" in (r.details() or "")
            assert details(rpc_status.from_call(r))[0].reason == "SERVER_AT_CAPACITY"
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await create(control, ("a",))
        assert re.fullmatch(
            r"the server already holds 2 sessions, its limit \(max_sessions 2\); close sessions "
            r"you no longer need, or retry in \d+\.\d\d s \(the status's RetryInfo\)",
            err.value.details() or "",
        )

        # Closing one makes room again; the open sessions are unaffected.
        await control.CloseSession(
            control_pb2.CloseSessionRequest(session_id=opened[0].session.session_id)
        )
        again = await create(control, ("a", "b"))
        client = AgentClient(channel)
        await client.join(opened[1].session.session_id, opened[1].tokens[0].join_token)
        assert (await client.result_or_error(client.tool("get_alerts"))).result.tick == 1
        client.close()
        assert again.session.session_id
        await assert_serving(channel)


# -- the ROUND_ROBIN clock ----------------------------------------------------------------------


def turns_and_calls(events: list[common_pb2.SessionEvent]) -> list[tuple[str, str]]:
    out = []
    for e in events:
        kind = e.WhichOneof("event")
        if kind == "turn":
            out.append(("turn", e.turn.agent_id))
        elif kind == "applied":
            out.append(("applied", e.applied.agent_id))
    return out


async def take_turn(client: AgentClient, tool: str) -> agent_pb2.ConnectResponse:
    """Wait for a TurnGranted naming this agent and call; if the turn passed first, wait again."""
    while True:
        await client.expect("turn", lambda m: m.turn.agent_id == client.agent_id)
        reply = await client.result_or_error(client.tool(tool))
        if reply.WhichOneof("response") == "result":
            return reply
        assert details(reply.error)[0].reason == "NOT_YOUR_TURN", reply


async def test_round_robin_timeout_skips_an_absent_agent():
    timeout = 0.2
    async with serving(Limits()) as (_, channel):
        control = control_pb2_grpc.ControlServiceStub(channel)
        created = await create(
            control,
            ("a", "b", "c"),
            policy=common_pb2.TURN_POLICY_ROUND_ROBIN,
            turn_timeout=timeout,
        )
        sid = created.session.session_id
        watch = watch_pb2_grpc.WatchServiceStub(channel).WatchSession(
            watch_pb2.WatchSessionRequest(session_id=sid)
        )
        a, c = AgentClient(channel), AgentClient(channel)
        await a.join(sid, created.tokens[0].join_token)
        await c.join(sid, created.tokens[2].join_token)
        # b holds a seat and never connects.
        first = await take_turn(a, "get_alerts")
        after_a = time.monotonic()
        second = await take_turn(c, "check_dependencies")
        # c's turn came only once b's clock ran out.
        assert time.monotonic() - after_a >= timeout * 0.8
        third = await take_turn(a, "get_alerts")
        assert [first.result.tick, second.result.tick, third.result.tick] == [1, 2, 3]

        events = []
        while len([e for e in events if e.WhichOneof("event") == "applied"]) < 3:
            events.append((await asyncio.wait_for(watch.read(), TIMEOUT)).event)
        seen = turns_and_calls(events)
        assert [agent for kind, agent in seen if kind == "applied"] == ["a", "c", "a"]
        # Each turn b was granted passed to the next seat with no call from b in between.
        grants_to_b = [i for i, step in enumerate(seen) if step == ("turn", "b")]
        assert grants_to_b
        for i in grants_to_b:
            assert seen[i + 1] == ("turn", "c")
        watch.cancel()
        a.close()
        c.close()


async def test_round_robin_keeps_its_clock_while_agents_are_connected():
    # a calls; then b (absent), c and a (both connected, silent) each let the clock run out:
    # a full lap of skips that ends on b. The clock must keep running for c and a, whose
    # calls would otherwise be refused forever while the turn waits on an absent seat.
    timeout = 0.2
    async with serving(Limits()) as (_, channel):
        control = control_pb2_grpc.ControlServiceStub(channel)
        created = await create(
            control,
            ("a", "b", "c"),
            policy=common_pb2.TURN_POLICY_ROUND_ROBIN,
            turn_timeout=timeout,
        )
        sid = created.session.session_id
        a, c = AgentClient(channel), AgentClient(channel)
        await a.join(sid, created.tokens[0].join_token)
        await c.join(sid, created.tokens[2].join_token)
        first = await take_turn(a, "get_alerts")
        assert first.result.tick == 1
        # Silent: let the turn pass c, then a (each message is a TurnGranted the server sent).
        await c.expect("turn", lambda m: m.turn.agent_id == "c")
        await a.expect("turn", lambda m: m.turn.agent_id == "a")
        # The lap ended on absent b; after its timeout c gets the turn again and plays.
        reply = await take_turn(c, "check_dependencies")
        assert reply.result.tick == 2
        a.close()
        c.close()


async def test_round_robin_clock_restarts_when_an_agent_joins_an_empty_session():
    # a calls and leaves; with nobody connected the turn laps b, c, a and then waits on b
    # without a clock. c joining must start the clock again: b is skipped and c plays.
    timeout = 0.2
    async with serving(Limits()) as (_, channel):
        control = control_pb2_grpc.ControlServiceStub(channel)
        created = await create(
            control,
            ("a", "b", "c"),
            policy=common_pb2.TURN_POLICY_ROUND_ROBIN,
            turn_timeout=timeout,
        )
        sid = created.session.session_id
        watch = watch_pb2_grpc.WatchServiceStub(channel).WatchSession(
            watch_pb2.WatchSessionRequest(session_id=sid)
        )
        a = AgentClient(channel)
        await a.join(sid, created.tokens[0].join_token)
        assert (await take_turn(a, "get_alerts")).result.tick == 1
        a.close()
        while (await asyncio.wait_for(a.call.read(), TIMEOUT)) is not grpc.aio.EOF:
            pass
        seen: list[tuple[str, str]] = []
        after: list[tuple[str, str]] = []
        while len(after) < 4:
            seen += turns_and_calls([(await asyncio.wait_for(watch.read(), TIMEOUT)).event])
            if ("applied", "a") in seen:
                after = seen[seen.index(("applied", "a")) + 1 :]
        # The lap b, c, a ran out and b holds the turn again.
        assert after == [
            ("turn", "b"),
            ("turn", "c"),
            ("turn", "a"),
            ("turn", "b"),
        ]
        c = AgentClient(channel)
        await c.join(sid, created.tokens[2].join_token)
        assert (await take_turn(c, "check_dependencies")).result.tick == 2
        watch.cancel()
        c.close()
