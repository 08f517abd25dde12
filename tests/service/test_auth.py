"""Authorisation gaps the other tests leave: what each kind of token opens, and nothing more.

(test_operations covers the admin token on ListSessions, CreateSession and WatchSession,
test_logging that no token reaches the logs, test_tls TLS end to end, test_recovery that tokens
survive a restart and are not in the store.)
"""

from __future__ import annotations

import grpc
import pytest

from metasre.service import ServerConfig, build_server
from metasre.v1 import agent_pb2, agent_pb2_grpc, control_pb2, control_pb2_grpc

from .conftest import AgentClient, create, details, struct


async def refused(client: AgentClient, request: agent_pb2.ConnectRequest) -> str:
    client.send(request)
    return details((await client.expect("error")).error)[0].reason


def join(sid: str, token: str) -> agent_pb2.ConnectRequest:
    return agent_pb2.ConnectRequest(join=agent_pb2.JoinSeat(session_id=sid, join_token=token))


def resume(sid: str, token: str) -> agent_pb2.ConnectRequest:
    return agent_pb2.ConnectRequest(resume=agent_pb2.ResumeSeat(session_id=sid, resume_token=token))


async def test_each_token_opens_its_own_seat_of_its_own_session_only(channel, control):
    one = await create(control, ("a", "b"))
    two = await create(control, ("a", "b"))
    sid1, sid2 = one.session.session_id, two.session.session_id
    a = AgentClient(channel)
    joined = await a.join(sid1, one.tokens[0].join_token)
    assert joined.agent_id == "a"
    resume_a = joined.resume_token
    assert resume_a and resume_a != one.tokens[0].join_token

    probe = AgentClient(channel)
    # A join token opens its seat in its session only; the same agent id elsewhere is another
    # seat with another token.
    assert await refused(probe, join(sid2, one.tokens[0].join_token)) == "TOKEN_INVALID"
    # A resume token is not a join token, a join token not a resume token.
    assert await refused(probe, join(sid1, resume_a)) == "TOKEN_INVALID"
    assert await refused(probe, resume(sid1, one.tokens[1].join_token)) == "TOKEN_INVALID"
    # A resume token is single-seat: it opens seat a of session one, nothing else.
    assert await refused(probe, resume(sid2, resume_a)) == "TOKEN_INVALID"
    assert await refused(probe, resume(sid1, resume_a[:-1])) == "TOKEN_INVALID"
    assert await refused(probe, join(sid1, "")) == "TOKEN_MISSING"
    probe.send(resume(sid1, resume_a))
    taken = (await probe.expect("joined")).joined
    assert (taken.agent_id, taken.resume_token) == ("a", resume_a)
    probe.close()

    # CallTool: the seat's tokens for its session only.
    stub = agent_pb2_grpc.AgentServiceStub(channel)
    for sid, token in ((sid2, one.tokens[0].join_token), (sid2, resume_a), (sid1, "x" * 32)):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.CallTool(
                agent_pb2.CallToolRequest(
                    session_id=sid,
                    token=token,
                    call=agent_pb2.ToolCall(call_id="t", tool="get_alerts", args=struct()),
                )
            )
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    a.close()


CONTROL_CALLS = [
    ("GetServerInfo", control_pb2.GetServerInfoRequest()),
    ("ListScenarios", control_pb2.ListScenariosRequest()),
    ("ListTools", control_pb2.ListToolsRequest()),
    ("CreateSession", control_pb2.CreateSessionRequest(scenario_id="x")),
    ("GetSession", control_pb2.GetSessionRequest(session_id="SID")),
    ("ListSessions", control_pb2.ListSessionsRequest()),
    ("ResetSession", control_pb2.ResetSessionRequest(session_id="SID")),
    ("CloseSession", control_pb2.CloseSessionRequest(session_id="SID")),
    ("GetGrade", control_pb2.GetGradeRequest(session_id="SID")),
    ("GetTrajectory", control_pb2.GetTrajectoryRequest(session_id="SID")),
]


async def test_every_control_call_needs_the_admin_token_when_one_is_configured():
    """Server-wide calls need the admin token; calls on a session need it or the session's
    owner token (test_ownership), and a seat's tokens are neither."""
    names = {m.name for m in control_pb2.DESCRIPTOR.services_by_name["ControlService"].methods}
    assert names == {name for name, _ in CONTROL_CALLS}
    server = await build_server(ServerConfig(port=0, admin_token="s3cret", grace_seconds=0.2))
    await server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            good = (("authorization", "Bearer s3cret"),)
            created = await create(control, ("a",), metadata=good)
            sid = created.session.session_id
            # A seat's own tokens are no admin token either.
            joined = await AgentClient(channel).join(sid, created.tokens[0].join_token)
            for name, request in CONTROL_CALLS:
                if hasattr(request, "session_id"):
                    request.session_id = sid
                for metadata, code in (
                    ((), grpc.StatusCode.UNAUTHENTICATED),
                    ((("authorization", "Bearer wrong"),), grpc.StatusCode.PERMISSION_DENIED),
                    (
                        (("authorization", f"Bearer {created.tokens[0].join_token}"),),
                        grpc.StatusCode.PERMISSION_DENIED,
                    ),
                    (
                        (("authorization", f"Bearer {joined.resume_token}"),),
                        grpc.StatusCode.PERMISSION_DENIED,
                    ),
                ):
                    if name == "ListSessions" and metadata:
                        # any token may ask; it lists what that token owns: here nothing
                        listed = await control.ListSessions(request, metadata=metadata)
                        assert list(listed.sessions) == [], name
                        continue
                    if metadata and hasattr(request, "session_id"):
                        # a token that does not own the session is told what a stranger is:
                        # no such session (test_ownership)
                        code = grpc.StatusCode.NOT_FOUND
                    with pytest.raises(grpc.aio.AioRpcError) as err:
                        await getattr(control, name)(request, metadata=metadata)
                    assert err.value.code() == code, name
            # The session is untouched by all those refusals.
            info = await control.GetSession(
                control_pb2.GetSessionRequest(session_id=sid), metadata=good
            )
            assert not info.session.closed and info.session.episode == 1
    finally:
        await server.stop(0.2)
