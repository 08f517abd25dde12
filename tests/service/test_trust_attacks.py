"""What an agent holding only its seat's credentials might try against this wave's changes.

Through a real server. Since CreateSession takes a `request_id` whose join tokens are derived
(from the owner token), an agent that learns the request id tries to replay it with every
credential it holds, to get its teammates' seats or the session itself. Since a reset moves past
episodes out of memory and reads them back from the store, it tries that new path to read a
finished episode (the answer to the incident) with every credential but the owner's.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_status import rpc_status

from metasre.service import ServerConfig, build_server
from metasre.v1 import (
    agent_pb2,
    agent_pb2_grpc,
    control_pb2,
    control_pb2_grpc,
    watch_pb2,
    watch_pb2_grpc,
)

from .conftest import TIMEOUT, AgentClient, details, pay_solution, struct
from .test_create_request_id import request, tokens


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def reason_of(call: Any) -> tuple[str, str]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    status = rpc_status.from_call(err.value)
    return err.value.code().name, details(status)[0].reason if status is not None else ""


@pytest.fixture
async def served(tmp_path: Path) -> Any:
    server = await build_server(ServerConfig(port=0, store_path=tmp_path / "store.db"))
    await server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            yield server, channel
    finally:
        await server.stop(0.5)


async def test_an_agent_cannot_replay_the_request_id_into_its_teammates_seats(served) -> None:
    _, channel = served
    control = control_pb2_grpc.ControlServiceStub(channel)
    agents = agent_pb2_grpc.AgentServiceStub(channel)
    owner = secrets.token_urlsafe(24)
    made = await control.CreateSession(request(owner, "job-7"), metadata=bearer(owner))
    sid, seats = made.session.session_id, tokens(made)
    mine = seats["a1"]
    client = AgentClient(channel)
    joined = await client.join(sid, mine)
    client.close()
    held = {
        "its join token": mine,
        "its resume token": joined.resume_token,
        "the session id": sid,
        "the request id": "job-7",
        "a join token of its own making": secrets.token_urlsafe(24),
    }
    for name, credential in held.items():
        # The same request id under a credential it holds: at best a session of its own.
        try:
            replay = await control.CreateSession(
                request(credential, "job-7"), metadata=bearer(credential)
            )
        except grpc.aio.AioRpcError as refused:  # too short to be an owner token, say
            assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT, name
            continue
        assert replay.session.session_id != sid, name
        assert not set(tokens(replay).values()) & set(seats.values()), name
        # ... and none of the real session's control calls answer that credential.
        assert await reason_of(
            control.GetSession(
                control_pb2.GetSessionRequest(session_id=sid), metadata=bearer(credential)
            )
        ) == ("NOT_FOUND", "SESSION_NOT_FOUND"), name
    # Nor does anything made from what it holds open a seat (its own token aside).
    # (its resume token opens its own seat, as it should)
    forged = {name: c for name, c in held.items() if c not in (mine, joined.resume_token)}
    forged["its join token reversed"] = mine[::-1]
    forged["its join token with a teammate's id"] = mine[:-2] + "a0"
    for name, credential in forged.items():
        call = agent_pb2.ToolCall(call_id=f"x-{len(name)}", tool="get_alerts")
        code, reason = await reason_of(
            agents.CallTool(agent_pb2.CallToolRequest(session_id=sid, token=credential, call=call))
        )
        assert (code, reason) == ("PERMISSION_DENIED", "TOKEN_INVALID"), name


async def test_past_episodes_read_from_the_store_stay_the_owner_s(served) -> None:
    _, channel = served
    control = control_pb2_grpc.ControlServiceStub(channel)
    watch = watch_pb2_grpc.WatchServiceStub(channel)
    owner = secrets.token_urlsafe(24)
    made = await control.CreateSession(request(owner, "job-8", seats=1), metadata=bearer(owner))
    sid, seat = made.session.session_id, tokens(made)["a0"]
    agents = agent_pb2_grpc.AgentServiceStub(channel)
    # The episode is solved; the next reset moves it out of memory, into the store only.
    for n, (tool, args) in enumerate(pay_solution(0)):
        await agents.CallTool(
            agent_pb2.CallToolRequest(
                session_id=sid,
                token=seat,
                call=agent_pb2.ToolCall(call_id=f"s{n}", tool=tool, args=struct(args)),
            )
        )
    await control.ResetSession(
        control_pb2.ResetSessionRequest(session_id=sid), metadata=bearer(owner)
    )
    solved = await control.GetTrajectory(
        control_pb2.GetTrajectoryRequest(session_id=sid, episode=1), metadata=bearer(owner)
    )
    assert any(e.WhichOneof("event") == "ended" for e in solved.events)

    someone = secrets.token_urlsafe(24)
    await control.CreateSession(request(someone, "theirs", seats=1), metadata=bearer(someone))
    credentials = {
        "nothing": (),
        "its seat's join token": bearer(seat),
        "another owner's token": bearer(someone),
        "the session id": bearer(sid),
        "a malformed header": (("authorization", owner),),
    }
    for name, metadata in credentials.items():
        for episode in (1, 2):
            assert await reason_of(
                control.GetTrajectory(
                    control_pb2.GetTrajectoryRequest(session_id=sid, episode=episode),
                    metadata=metadata,
                )
            ) in {
                ("NOT_FOUND", "SESSION_NOT_FOUND"),
                ("UNAUTHENTICATED", "TOKEN_MISSING"),
            }, (name, episode)
            stream = watch.WatchSession(
                watch_pb2.WatchSessionRequest(session_id=sid, episode=episode),
                metadata=metadata,
            )
            code, reason = await reason_of(asyncio.wait_for(stream.read(), TIMEOUT))
            assert (code, reason) in {
                ("NOT_FOUND", "SESSION_NOT_FOUND"),
                ("UNAUTHENTICATED", "TOKEN_MISSING"),
            }, (name, episode)
