"""A session answers its owner (and the admin) only: many untrusted clients share one server.

The attacks of the review, through a real server: listing other teams' sessions, reading a
finished team's trajectory to replay it, reading another session's grade, resetting or closing
it, watching it, and using a seat's own tokens as control credentials. With no admin token
configured, and with one.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_status import rpc_status

from metasre.agents import MetasreClient
from metasre.agents.errors import ClientError
from metasre.service import ServerConfig, build_server
from metasre.v1 import control_pb2, control_pb2_grpc, watch_pb2, watch_pb2_grpc

from .conftest import PAY, TIMEOUT, details, pay_solution
from .serve_process import metasre_serve


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def play_to_the_end(client: MetasreClient) -> tuple[str, dict[str, str], str]:
    """Alice's team solves the incident: (session id, seat tokens, a seat's resume token)."""
    handle = await client.create_session(PAY, seed=0, seats=["a", "b"])
    async with client.agent(handle.id, handle.tokens["a"]) as agent:
        resume = agent.resume_token
        for tool, args in pay_solution(0):
            await agent.call(tool, args)
    return handle.id, dict(handle.tokens), resume


def attempts(
    stub: control_pb2_grpc.ControlServiceStub, watch: Any, sid: str
) -> dict[str, Callable[[tuple[tuple[str, str], ...]], Awaitable[Any]]]:
    """Every control call on one session, by name."""

    async def watched(metadata: tuple[tuple[str, str], ...]) -> Any:
        call = watch.WatchSession(watch_pb2.WatchSessionRequest(session_id=sid), metadata=metadata)
        return await asyncio.wait_for(call.read(), TIMEOUT)

    return {
        "GetSession": lambda m: stub.GetSession(
            control_pb2.GetSessionRequest(session_id=sid), metadata=m
        ),
        "GetGrade": lambda m: stub.GetGrade(
            control_pb2.GetGradeRequest(session_id=sid), metadata=m
        ),
        "GetTrajectory": lambda m: stub.GetTrajectory(
            control_pb2.GetTrajectoryRequest(session_id=sid), metadata=m
        ),
        "ResetSession": lambda m: stub.ResetSession(
            control_pb2.ResetSessionRequest(session_id=sid), metadata=m
        ),
        "CloseSession": lambda m: stub.CloseSession(
            control_pb2.CloseSessionRequest(session_id=sid), metadata=m
        ),
        "WatchSession": watched,
    }


async def refused_with(call: Awaitable[Any]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    return err.value.code(), details(rpc_status.from_call(err.value))[0].reason


@pytest.mark.parametrize("admin", [None, "s3cret"], ids=["no-admin-token", "admin-token"])
async def test_a_session_answers_its_owner_and_the_admin_only(admin: str | None) -> None:
    server = await build_server(ServerConfig(port=0, admin_token=admin, grace_seconds=0.2))
    await server.start()
    try:
        async with (
            MetasreClient(server.address, admin_token=admin) as operator,
            MetasreClient(server.address, owner_token=None) as mallory,
            grpc.aio.insecure_channel(server.address) as channel,
        ):
            alice = MetasreClient(server.address, admin_token=None)
            if admin is not None:
                # only the operator creates sessions here; it hands Alice her owner token
                handle = await operator.create_session(PAY, seed=0, seats=["a", "b"])
                alice = MetasreClient(server.address, owner_token=handle.owner_token)
                await operator.close_session(handle.id)
            async with alice:
                creator = operator if admin is not None else alice
                sid, tokens, resume = await play_to_the_end(creator)
                owner = creator.owner_token if admin is None else admin
                if admin is None:
                    # Mallory owns a session of her own on the same server
                    await mallory.create_session(PAY, seed=0, seats=["m"])
                stub = control_pb2_grpc.ControlServiceStub(channel)
                watch = watch_pb2_grpc.WatchServiceStub(channel)
                calls = attempts(stub, watch, sid)
                foreign = {
                    "another client's owner token": mallory.owner_token,
                    "a seat's join token": tokens["b"],
                    "a seat's resume token": resume,
                    "a made-up token": "x" * 32,
                }
                for name, call in calls.items():
                    for what, token in foreign.items():
                        code, reason = await refused_with(call(bearer(token)))
                        assert (code, reason) == (
                            grpc.StatusCode.NOT_FOUND,
                            "SESSION_NOT_FOUND",
                        ), (name, what)
                    code, reason = await refused_with(call(()))
                    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")
                # The SDK as Mallory: the same refusals, as ClientError.
                for attempt in (mallory.get_grade(sid), mallory.close_session(sid)):
                    with pytest.raises(ClientError, match="SESSION_NOT_FOUND"):
                        await attempt
                # Listing shows nobody else's sessions.
                listed = await stub.ListSessions(
                    control_pb2.ListSessionsRequest(), metadata=bearer(mallory.owner_token)
                )
                assert sid not in {s.session_id for s in listed.sessions}
                # After all that, the session is untouched, and its owner reaches everything.
                grade = await stub.GetGrade(
                    control_pb2.GetGradeRequest(session_id=sid), metadata=bearer(owner)
                )
                assert grade.grade.final and grade.grade.total > 0.9
                trajectory = await stub.GetTrajectory(
                    control_pb2.GetTrajectoryRequest(session_id=sid), metadata=bearer(owner)
                )
                assert len(trajectory.events) > 4
                info = await stub.GetSession(
                    control_pb2.GetSessionRequest(session_id=sid), metadata=bearer(owner)
                )
                assert not info.session.closed and info.session.episode == 1
                if admin is not None:  # the owner token the operator handed on works too
                    assert (await alice.get_grade(sid))["grade"]["final"]
    finally:
        await server.stop(0.2)


async def test_one_client_owns_all_its_sessions_and_its_credential_can_be_handed_on(server):
    async with MetasreClient(server.address) as first:
        one = await first.create_session(PAY, seed=0, seats=["a"])
        two = await first.create_session(PAY, seed=1, seats=["a"])
        assert one.owner_token == two.owner_token == first.owner_token
        async with (
            MetasreClient(server.address, owner_token=first.owner_token) as heir,
            MetasreClient(server.address) as stranger,
            grpc.aio.insecure_channel(server.address) as channel,
        ):
            stub = control_pb2_grpc.ControlServiceStub(channel)
            listed = await stub.ListSessions(
                control_pb2.ListSessionsRequest(), metadata=bearer(first.owner_token)
            )
            assert {s.session_id for s in listed.sessions} == {one.id, two.id}
            mine = await stub.ListSessions(
                control_pb2.ListSessionsRequest(), metadata=bearer(stranger.owner_token)
            )
            assert list(mine.sessions) == []
            assert (await heir.get_grade(one.id))["grade"]["final"] is False
            await heir.close_session(two.id)
            with pytest.raises(ClientError, match="SESSION_NOT_FOUND"):
                await stranger.get_grade(one.id)


async def test_an_owner_token_must_look_like_one(channel, control):
    for bad in ("short", "x" * 300, "tab\there-and-long-enough", "ünïcödé-owner-token"):
        request = control_pb2.CreateSessionRequest(scenario_id=PAY, owner_token=bad)
        code, reason = await refused_with(control.CreateSession(request))
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST"), bad


async def test_ownership_survives_a_server_killed_and_restarted(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    async with metasre_serve("--store", str(db)) as served:
        async with MetasreClient(served.address) as alice:
            handle = await alice.create_session(PAY, seed=0, seats=["a"])
            owner = alice.owner_token
        served.proc.send_signal(signal.SIGKILL)
        await served.proc.wait()
    async with (
        metasre_serve("--store", str(db)) as again,
        MetasreClient(again.address, owner_token=owner) as heir,
        MetasreClient(again.address) as mallory,
    ):
        assert (await heir.get_grade(handle.id))["grade"]["final"] is False
        with pytest.raises(ClientError, match="SESSION_NOT_FOUND"):
            await mallory.get_grade(handle.id)


async def test_a_closed_sessions_trajectory_stays_readable_by_its_owner(tmp_path: Path) -> None:
    """Issue 17: a closed session's trajectory answered NOT_FOUND although the store held it.
    Finished work stays readable, by its owner (and the admin) only."""
    server = await build_server(
        ServerConfig(port=0, store_path=tmp_path / "store.db", grace_seconds=0.2)
    )
    await server.start()
    try:
        async with (
            MetasreClient(server.address) as alice,
            MetasreClient(server.address) as mallory,
            grpc.aio.insecure_channel(server.address) as channel,
        ):
            sid, _tokens, _resume = await play_to_the_end(alice)
            stub = control_pb2_grpc.ControlServiceStub(channel)
            request = control_pb2.GetTrajectoryRequest(session_id=sid)
            live = await stub.GetTrajectory(request, metadata=bearer(alice.owner_token))
            await alice.close_session(sid)
            stored = await stub.GetTrajectory(request, metadata=bearer(alice.owner_token))
            assert [e.tick for e in stored.events] == [e.tick for e in live.events]
            assert len(stored.events) > 4
            code, reason = await refused_with(
                stub.GetTrajectory(request, metadata=bearer(mallory.owner_token))
            )
            assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "SESSION_NOT_FOUND")
            code, _ = await refused_with(
                stub.GetTrajectory(
                    control_pb2.GetTrajectoryRequest(session_id=sid, episode=9),
                    metadata=bearer(alice.owner_token),
                )
            )
            assert code == grpc.StatusCode.INVALID_ARGUMENT
            code, reason = await refused_with(
                stub.GetTrajectory(
                    control_pb2.GetTrajectoryRequest(session_id="f" * 16),
                    metadata=bearer(alice.owner_token),
                )
            )
            assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "SESSION_NOT_FOUND")
    finally:
        await server.stop(0.2)
