"""Owners that cannot crowd each other out, through a real server.

The attacks: one owner filling the server one create at a time and in a burst, retrying with
request ids to be counted once per session, and sessions that ended but hold their slot. Time
limits are tenths of a second, awaited on what the server shows (its session list), not slept.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from metasre.service import Limits, ServerConfig, build_server
from metasre.service.server import MetasreServer
from metasre.v1 import common_pb2, control_pb2, control_pb2_grpc

from .conftest import PAY, TIMEOUT, AgentClient, create, details, owner_channel, pay_solution


@contextlib.asynccontextmanager
async def serving(limits: Limits) -> AsyncIterator[MetasreServer]:
    server = await build_server(ServerConfig(port=0, limits=limits, grace_seconds=0.5))
    await server.start()
    try:
        yield server
    finally:
        await server.stop(0.5)


@contextlib.asynccontextmanager
async def owner(server: MetasreServer) -> AsyncIterator[control_pb2_grpc.ControlServiceStub]:
    """The control stub of a new owner (its own owner token on every call)."""
    async with owner_channel(server.address, secrets.token_urlsafe(24)) as channel:
        yield control_pb2_grpc.ControlServiceStub(channel)


def retry_delay(err: grpc.aio.AioRpcError) -> float:
    status = rpc_status.from_call(err)
    assert status is not None
    for detail in status.details:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return info.retry_delay.ToTimedelta().total_seconds()
    raise AssertionError("no RetryInfo in the refusal")


def assert_at_quota(err: grpc.aio.AioRpcError, quota: int) -> None:
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info, _ = details(rpc_status.from_call(err))
    assert info.reason == "OWNER_AT_QUOTA"
    assert info.metadata["max_sessions_per_owner"] == str(quota)
    assert f"max_sessions_per_owner {quota}" in (err.details() or "")
    assert 0 < retry_delay(err) <= 40
    trailers = dict(err.trailing_metadata() or ())
    assert trailers["metasre-max-sessions-per-owner"] == str(quota)
    assert "grpc-retry-pushback-ms" in trailers


async def open_ids(control: control_pb2_grpc.ControlServiceStub) -> set[str]:
    reply = await control.ListSessions(control_pb2.ListSessionsRequest())
    return {s.session_id for s in reply.sessions}


# -- the per-owner quota ------------------------------------------------------------------------


async def test_one_owner_cannot_fill_the_server_and_the_others_still_get_in():
    limits = Limits(max_sessions=6, max_sessions_per_owner=2)
    async with serving(limits) as server, owner(server) as greedy, owner(server) as other:
        info = await greedy.GetServerInfo(control_pb2.GetServerInfoRequest())
        assert (info.limits.max_sessions_per_owner, info.limits.max_sessions) == (2, 6)
        assert info.limits.ended_session_seconds == limits.ended_session_seconds

        first = [await create(greedy, ("a",)) for _ in range(2)]
        # One at a time: the third is refused with the limit named and a delay.
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await create(greedy, ("a",))
        assert_at_quota(err.value, 2)
        # In a burst (creates racing each other): none gets past the quota.
        burst = await asyncio.gather(
            *(create(greedy, ("a", "b")) for _ in range(5)), return_exceptions=True
        )
        for refused in burst:
            assert isinstance(refused, grpc.aio.AioRpcError)
            assert_at_quota(refused, 2)
        assert len(await open_ids(greedy)) == 2

        # Another owner has its own quota, and the server's room is still there for it.
        theirs = await asyncio.gather(*(create(other, ("a",)) for _ in range(2)))
        assert len(await open_ids(other)) == 2
        assert all(t.session.session_id for t in theirs)

        # Closing one frees the owner's slot.
        await greedy.CloseSession(
            control_pb2.CloseSessionRequest(session_id=first[0].session.session_id)
        )
        await create(greedy, ("a",))


async def test_a_burst_of_one_owner_opens_exactly_its_quota():
    limits = Limits(max_sessions=10, max_sessions_per_owner=3)
    async with serving(limits) as server, owner(server) as greedy, owner(server) as other:
        burst = await asyncio.gather(
            *(create(greedy, ("a",)) for _ in range(8)), return_exceptions=True
        )
        opened = [r for r in burst if isinstance(r, control_pb2.CreateSessionResponse)]
        refused = [r for r in burst if isinstance(r, grpc.aio.AioRpcError)]
        assert (len(opened), len(refused)) == (3, 5)
        for r in refused:
            assert_at_quota(r, 3)
        await create(other, ("a",))


async def test_a_request_id_retried_counts_once_and_the_server_cap_still_comes_first():
    limits = Limits(max_sessions=3, max_sessions_per_owner=2)
    async with serving(limits) as server, owner(server) as greedy, owner(server) as other:
        request = control_pb2.CreateSessionRequest(
            scenario_id=PAY, seats=[common_pb2.SeatConfig(agent_id="a")], request_id="r-1"
        )
        once = await greedy.CreateSession(request)
        # The same id again is the same session, not a second one against the quota.
        for _ in range(3):
            again = await greedy.CreateSession(request)
            assert again.session.session_id == once.session.session_id
        await create(greedy, ("a",))
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await create(greedy, ("a",))
        assert_at_quota(err.value, 2)
        await create(other, ("a",))
        # The server is full now: that refusal names the server's limit, not a quota.
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await create(other, ("a",))
        assert details(rpc_status.from_call(err.value))[0].reason == "SERVER_AT_CAPACITY"


# -- ended sessions are released ---------------------------------------------------------------


async def end_episode(client: AgentClient) -> None:
    tool, args = pay_solution()[-1]
    reply = await client.result_or_error(client.tool(tool, args))
    assert reply.WhichOneof("response") == "result", reply
    await client.until_end()


async def until_gone(control: control_pb2_grpc.ControlServiceStub, session_id: str) -> None:
    async def poll() -> None:
        while session_id in await open_ids(control):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), TIMEOUT)


async def joined(
    control: control_pb2_grpc.ControlServiceStub, channel: grpc.aio.Channel
) -> tuple[str, AgentClient]:
    created = await create(control, ("a",))
    client = AgentClient(channel)
    await client.join(created.session.session_id, created.tokens[0].join_token)
    return created.session.session_id, client


async def test_a_session_whose_episode_ended_and_whose_seats_left_is_released():
    limits = Limits(max_sessions_per_owner=3, ended_session_seconds=0.3)
    async with (
        serving(limits) as server,
        owner_channel(server.address, secrets.token_urlsafe(24)) as channel,
    ):
        control = control_pb2_grpc.ControlServiceStub(channel)
        held, holder = await joined(control, channel)  # ended, its seat still held
        await end_episode(holder)
        running, runner = await joined(control, channel)  # running, its seat gone
        await runner.result_or_error(runner.tool("get_alerts"))
        runner.close()
        ended, leaver = await joined(control, channel)  # ended, then its seat left
        await end_episode(leaver)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await create(control, ("a",))
        assert_at_quota(err.value, 3)
        leaver.close()

        await until_gone(control, ended)
        # The other two have been in their state longer than the one released, so the
        # same passes of the reaper saw them: neither an ended session whose seat is held
        # nor a running one whose seat left is released.
        assert {held, running} <= await open_ids(control)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await control.GetSession(control_pb2.GetSessionRequest(session_id=ended))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        assert details(rpc_status.from_call(err.value))[0].reason == "SESSION_RELEASED"
        assert "released" in (err.value.details() or "")
        # Its slot is the owner's again.
        await create(control, ("a",))
        holder.close()
        await until_gone(control, held)
