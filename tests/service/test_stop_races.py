"""Stops racing calls: every stop, close and reset ends in bounded time, every call is answered.

A call that reaches the sequencer just as a stop does is the race: Python 3.11's
`asyncio.wait_for` dropped the cancellation then, the sequencer ran on, and the stop (a
CloseSession, a SIGTERM's drain) waited forever; a SIMULTANEOUS round's gathered calls were
lost with the cancelled round and never answered. Each race here runs many times at shifting
offsets, through the real server; a real SIGTERM races calls too.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from metasre.service import Limits, ServerConfig, build_server
from metasre.service.core.turns import Simultaneous
from metasre.service.server import MetasreServer
from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2, control_pb2_grpc

from .conftest import TIMEOUT, AgentClient, create, details, owned_channel, struct
from .serve_process import metasre_serve

POLICIES = {
    "free_for_all": common_pb2.TURN_POLICY_FREE_FOR_ALL,
    "round_robin": common_pb2.TURN_POLICY_ROUND_ROBIN,
    "simultaneous": common_pb2.TURN_POLICY_SIMULTANEOUS,
}
STOP_BOUND = 5.0
"""Seconds a close or a stop may take here: a call being applied finishes, nothing waits longer."""
RACES = 60
"""Races per policy: enough to see a 1-in-50 event (the SIGTERM hang was about 1 in 25)."""


def call_request(sid: str, token: str, call_id: str, tool: str = "get_alerts") -> Any:
    return agent_pb2.CallToolRequest(
        session_id=sid,
        token=token,
        call=agent_pb2.ToolCall(call_id=call_id, tool=tool, args=struct({})),
    )


async def answer(call: Any) -> tuple[str, str]:
    """('ok', '') or (status code name, ErrorInfo reason) of a unary call, bounded."""
    try:
        await asyncio.wait_for(call, TIMEOUT)
    except grpc.aio.AioRpcError as exc:
        from google.rpc import status_pb2

        reason = ""
        for key, value in exc.trailing_metadata() or ():
            if key == "grpc-status-details-bin":
                reason = details(status_pb2.Status.FromString(value))[0].reason
        return exc.code().name, reason
    return "ok", ""


@pytest.mark.parametrize("policy", list(POLICIES))
async def test_close_racing_a_call_ends_at_once_and_answers_the_call(channel, control, policy):
    agent = agent_pb2_grpc.AgentServiceStub(channel)
    seen: set[tuple[str, str]] = set()
    for race in range(RACES):
        created = await create(control, ("a", "b"), policy=POLICIES[policy], turn_timeout=30)
        sid, token = created.session.session_id, created.tokens[0].join_token
        call = asyncio.ensure_future(agent.CallTool(call_request(sid, token, f"c{race}")))
        for _ in range(race % 7):  # the close lands at a different point each time
            await asyncio.sleep(0)
        started = asyncio.get_running_loop().time()
        await asyncio.wait_for(
            control.CloseSession(control_pb2.CloseSessionRequest(session_id=sid)), STOP_BOUND
        )
        assert asyncio.get_running_loop().time() - started < STOP_BOUND
        outcome = await answer(call)
        # Applied before the close, aborted while it waited, or refused as it came after.
        assert outcome in {
            ("ok", ""),
            ("ABORTED", "SESSION_CLOSED"),
            ("FAILED_PRECONDITION", "SESSION_CLOSED"),
            ("NOT_FOUND", "SESSION_NOT_FOUND"),
        }, outcome
        seen.add(outcome)
    if policy == "simultaneous":
        # Its call waits for the other seat: the close always finds it waiting.
        assert ("ABORTED", "SESSION_CLOSED") in seen


async def until_gathered(server: MetasreServer, sid: str, agent_id: str) -> None:
    """Until the open SIMULTANEOUS round holds `agent_id`'s call (state, not time)."""
    _, coordinator = server.registry.get(sid)
    turns = coordinator.turns
    assert isinstance(turns, Simultaneous)
    while agent_id not in turns._batch:
        await asyncio.sleep(0.005)


async def test_a_call_waiting_in_a_simultaneous_round_is_aborted_by_a_reset(
    server, channel, control
):
    created = await create(control, ("a", "b"), policy=POLICIES["simultaneous"], turn_timeout=60)
    sid, token = created.session.session_id, created.tokens[0].join_token
    agent = agent_pb2_grpc.AgentServiceStub(channel)
    call = asyncio.ensure_future(agent.CallTool(call_request(sid, token, "first")))
    await asyncio.wait_for(until_gathered(server, sid, "a"), TIMEOUT)
    await asyncio.wait_for(
        control.ResetSession(control_pb2.ResetSessionRequest(session_id=sid)), STOP_BOUND
    )
    assert await answer(call) == ("ABORTED", "EPISODE_RESET")

    # The same call_id plays in the new episode (it was never applied), and is answered.
    again = asyncio.ensure_future(agent.CallTool(call_request(sid, token, "first")))
    await asyncio.wait_for(until_gathered(server, sid, "a"), TIMEOUT)
    other = created.tokens[1].join_token
    assert await answer(agent.CallTool(call_request(sid, other, "b1"))) == ("ok", "")
    assert await answer(again) == ("ok", "")


async def test_a_connect_call_waiting_in_a_round_hears_the_close_before_the_stream_ends(
    server, channel, control
):
    created = await create(control, ("a", "b"), policy=POLICIES["simultaneous"], turn_timeout=60)
    sid = created.session.session_id
    client = AgentClient(channel)
    await client.join(sid, created.tokens[0].join_token)
    call_id = client.tool("get_alerts")
    await asyncio.wait_for(until_gathered(server, sid, "a"), TIMEOUT)
    await control.CloseSession(control_pb2.CloseSessionRequest(session_id=sid))
    reply = await client.result_or_error(call_id)
    assert reply.WhichOneof("response") == "error"
    assert reply.error.code == grpc.StatusCode.ABORTED.value[0]
    assert details(reply.error)[0].reason == "SESSION_CLOSED"
    assert await asyncio.wait_for(client.call.code(), TIMEOUT) == grpc.StatusCode.OK


async def test_a_connect_call_waiting_in_a_round_hears_the_reset_and_the_stream_goes_on(
    server, channel, control
):
    created = await create(control, ("a", "b"), policy=POLICIES["simultaneous"], turn_timeout=60)
    sid = created.session.session_id
    client = AgentClient(channel)
    await client.join(sid, created.tokens[0].join_token)
    call_id = client.tool("get_alerts")
    await asyncio.wait_for(until_gathered(server, sid, "a"), TIMEOUT)
    await control.ResetSession(control_pb2.ResetSessionRequest(session_id=sid))
    reply = await client.result_or_error(call_id)
    assert reply.error.code == grpc.StatusCode.ABORTED.value[0]
    assert details(reply.error)[0].reason == "EPISODE_RESET"
    # The new episode's start may come before or after it: the error names its call_id.
    starts = [m for m in client.received if m.WhichOneof("response") == "episode_start"]
    if len(starts) < 2:
        await client.expect("episode_start")
    client.close()


@pytest.mark.parametrize("policy", ["round_robin", "simultaneous"])
async def test_server_stop_racing_calls_ends_in_bounded_time(policy):
    """What SIGTERM runs (the drain, then the gRPC stop), racing calls on many sessions."""
    for race in range(RACES // 4):
        config = ServerConfig(port=0, limits=Limits(turn_timeout_seconds=30), grace_seconds=0.5)
        server = await build_server(config)
        await server.start()
        channel = owned_channel(server.address)
        try:
            control = control_pb2_grpc.ControlServiceStub(channel)
            agent = agent_pb2_grpc.AgentServiceStub(channel)
            calls = []
            for n in range(4):
                created = await create(control, ("a", "b"), policy=POLICIES[policy])
                sid = created.session.session_id
                for token in created.tokens:
                    calls.append(
                        asyncio.ensure_future(
                            agent.CallTool(call_request(sid, token.join_token, f"c{n}"))
                        )
                    )
            for _ in range(race % 5):
                await asyncio.sleep(0)
            await asyncio.wait_for(server.stop(), STOP_BOUND)
            for call in calls:
                code, reason = await answer(call)
                # CANCELLED: gRPC's own answer to a call that reached the port only once the
                # listener was stopping (no handler ran); every call a handler took is answered.
                assert code in {
                    "ok",
                    "ABORTED",
                    "UNAVAILABLE",
                    "FAILED_PRECONDITION",
                    "CANCELLED",
                }, (code, reason)
        finally:
            await server.stop(0)
            await channel.close()


async def hammer(agent: Any, sid: str, token: str, agent_id: str, stop: asyncio.Event) -> None:
    """Call as fast as answers come until `stop`; refusals (not your turn) are expected."""
    n = 0
    while not stop.is_set():
        n += 1
        try:
            await agent.CallTool(call_request(sid, token, f"{agent_id}{n}"))
        except grpc.aio.AioRpcError:
            if stop.is_set():
                return
            await asyncio.sleep(0.001)


async def test_sigterm_racing_round_robin_calls_exits_promptly():
    """A real `metasre serve`, SIGTERMed while two agents hammer a ROUND_ROBIN session."""
    for _ in range(5):
        async with metasre_serve() as served:
            channel = owned_channel(served.address)
            control = control_pb2_grpc.ControlServiceStub(channel)
            agent = agent_pb2_grpc.AgentServiceStub(channel)
            created = await create(
                control, ("a", "b"), policy=POLICIES["round_robin"], turn_timeout=30
            )
            sid = created.session.session_id
            stop = asyncio.Event()
            hammers = [
                asyncio.create_task(hammer(agent, sid, t.join_token, t.agent_id, stop))
                for t in created.tokens
            ]
            await asyncio.sleep(0.3)  # let them play (not a wait for state: a load period)
            code = await asyncio.wait_for(served.stop(), STOP_BOUND * 2)
            stop.set()
            await asyncio.gather(*hammers, return_exceptions=True)
            await channel.close()
            assert code == 0
