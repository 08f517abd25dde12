"""Every row of the error table, each from a real bad request; the stream stays usable."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from grpc_status import rpc_status

from metasre.service import Limits, ServerConfig
from metasre.service.wire.status import ERROR_TABLE, to_status
from metasre.simulator import TOOLS
from metasre.v1 import (
    agent_pb2,
    agent_pb2_grpc,
    common_pb2,
    control_pb2,
    watch_pb2,
    watch_pb2_grpc,
)

from .conftest import TIMEOUT, AgentClient, create, details, pay_solution, struct

NOT_FOUND = grpc.StatusCode.NOT_FOUND.value[0]
FAILED = grpc.StatusCode.FAILED_PRECONDITION.value[0]
INVALID = grpc.StatusCode.INVALID_ARGUMENT.value[0]


@pytest.fixture
def config() -> ServerConfig:
    return ServerConfig(
        port=0, limits=Limits(max_sessions=3, max_agents_per_session=3), grace_seconds=0.5
    )


async def assert_usable(client: AgentClient) -> None:
    reply = await client.result_or_error(client.tool("get_alerts"))
    assert reply.WhichOneof("response") == "result", reply


def reason(msg: agent_pb2.ConnectResponse) -> str:
    assert msg.WhichOneof("response") == "error", msg
    info, _ = details(msg.error)
    assert info.domain == "metasre.dev"
    return info.reason


async def test_in_band_errors_leave_the_stream_open(channel, control):
    created = await create(
        control,
        ("commander", "investigator"),
        policy=common_pb2.TURN_POLICY_FREE_FOR_ALL,
        allowed={"investigator": ["get_alerts", "read_logs"]},
    )
    other = await create(control, ("x",))
    sid = created.session.session_id
    client = AgentClient(channel)

    # A call before join.
    refused = await client.result_or_error(client.tool("get_alerts", call_id="early"))
    assert reason(refused) == "NOT_JOINED" and refused.error.code == FAILED
    # Unknown session, missing token, a token of another session.
    client.send(
        agent_pb2.ConnectRequest(join=agent_pb2.JoinSeat(session_id="nope", join_token="t"))
    )
    msg = await client.expect("error")
    assert reason(msg) == "SESSION_NOT_FOUND" and msg.error.code == NOT_FOUND
    client.send(agent_pb2.ConnectRequest(join=agent_pb2.JoinSeat(session_id=sid)))
    msg = await client.expect("error")
    assert reason(msg) == "TOKEN_MISSING"
    assert msg.error.code == grpc.StatusCode.UNAUTHENTICATED.value[0]
    stolen = other.tokens[0].join_token
    client.send(
        agent_pb2.ConnectRequest(join=agent_pb2.JoinSeat(session_id=sid, join_token=stolen))
    )
    msg = await client.expect("error")
    assert reason(msg) == "TOKEN_INVALID"
    assert msg.error.code == grpc.StatusCode.PERMISSION_DENIED.value[0]

    # Now a real join of the investigator, then a second join on the same stream.
    await client.join(sid, created.tokens[1].join_token)
    client.send(
        agent_pb2.ConnectRequest(
            join=agent_pb2.JoinSeat(session_id=sid, join_token=created.tokens[0].join_token)
        )
    )
    assert reason(await client.expect("error")) == "ALREADY_JOINED"
    await assert_usable(client)

    # Unknown tool: the violation lists the valid choices.
    msg = await client.result_or_error(client.tool("rm_rf"))
    assert reason(msg) == "UNKNOWN_TOOL" and msg.error.code == INVALID
    (field, description), *_ = details(msg.error)[1]
    assert field == "tool" and all(name in description for name in TOOLS)
    # Bad arguments: one violation per field.
    msg = await client.result_or_error(client.tool("read_logs", {"service": 7, "bogus": 1}))
    assert reason(msg) == "INVALID_ARGUMENTS" and msg.error.code == INVALID
    fields = {f for f, _ in details(msg.error)[1]}
    assert {"args.service", "args.bogus"} <= fields
    # A tool the role may not use.
    msg = await client.result_or_error(client.tool("submit_report", pay_solution()[1][1]))
    assert reason(msg) == "TOOL_NOT_ALLOWED" and msg.error.code == FAILED
    await assert_usable(client)

    # The commander ends the episode; the investigator's next call is refused.
    commander = AgentClient(channel)
    await commander.join(sid, created.tokens[0].join_token)
    for tool, args in pay_solution():
        reply = await commander.result_or_error(commander.tool(tool, args))
        assert reply.WhichOneof("response") == "result"
    await client.until_end()
    msg = await client.result_or_error(client.tool("get_alerts"))
    assert reason(msg) == "EPISODE_OVER" and msg.error.code == FAILED
    # Still open: a reset starts a new episode and the same stream plays on.
    await control.ResetSession(control_pb2.ResetSessionRequest(session_id=sid, seed=1))
    await client.expect("episode_start")
    await assert_usable(client)
    client.close()
    commander.close()


async def test_unary_errors_carry_rich_status(channel, control):
    stub = agent_pb2_grpc.AgentServiceStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await control.GetSession(control_pb2.GetSessionRequest(session_id="missing"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    status = rpc_status.from_call(err.value)
    assert status is not None and details(status)[0].reason == "SESSION_NOT_FOUND"

    created = await create(control, ("a", "b"), policy=common_pb2.TURN_POLICY_ROUND_ROBIN)
    sid = created.session.session_id
    call = agent_pb2.ToolCall(call_id="1", tool="get_alerts", args=struct())
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.CallTool(agent_pb2.CallToolRequest(session_id=sid, call=call))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.CallTool(
            agent_pb2.CallToolRequest(session_id=sid, token=created.tokens[1].join_token, call=call)
        )
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "turn" in (err.value.details() or "")
    ok = await stub.CallTool(
        agent_pb2.CallToolRequest(session_id=sid, token=created.tokens[0].join_token, call=call)
    )
    assert ok.result.tick == 1

    with pytest.raises(grpc.aio.AioRpcError) as err:
        await create(control, ("a", "b", "c", "d"))
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert details(rpc_status.from_call(err.value))[0].reason == "SESSION_FULL"
    await create(control, ("a",))
    await create(control, ("a",))  # the third session: at the limit
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await create(control, ("a",))
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert details(rpc_status.from_call(err.value))[0].reason == "SERVER_AT_CAPACITY"
    await control.CloseSession(control_pb2.CloseSessionRequest(session_id=sid))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await control.CreateSession(control_pb2.CreateSessionRequest(scenario_id="no-such"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert details(rpc_status.from_call(err.value))[0].reason == "SCENARIO_NOT_FOUND"


def test_a_bug_is_internal_and_leaks_nothing():
    status, incident = to_status(RuntimeError("secret path /etc/shadow"))
    assert status.code == grpc.StatusCode.INTERNAL.value[0]
    assert "secret" not in status.message and incident in status.message
    assert details(status)[0].reason == "INTERNAL"


def test_every_row_of_the_table_has_a_reason():
    reasons = [row.reason for row in ERROR_TABLE.values()]
    assert all(r.isupper() for r in reasons)


PAYSVC = "payment-service"
NON_FINITE = [
    ("NaN in an argument", {"service": PAYSVC, "lines": float("nan")}, "args.lines"),
    ("infinity in an extra field", {"service": PAYSVC, "x": float("inf")}, "args.x"),
    ("-infinity deep in a list", {"service": PAYSVC, "x": [1, {"y": float("-inf")}]},
     "args.x[1].y"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "args", "field"), NON_FINITE, ids=[n for n, *_ in NON_FINITE])
@pytest.mark.parametrize("tool", ["read_logs", "no_such_tool"])
async def test_non_finite_numbers_are_invalid_arguments_not_internal_errors(
    channel, control, what: str, args: dict[str, object], field: str, tool: str
) -> None:
    """Issue 17: NaN or an infinity anywhere in a call's args gave INTERNAL (the JSON
    conversion failed). Over CallTool and in-band on Connect, for a known tool or not. Issue
    28: in the shape of every other argument error (INVALID_ARGUMENTS, field args.<path>), not
    INVALID_REQUEST with call.args.<path>."""
    created = await create(control, ("a",))
    sid, token = created.session.session_id, created.tokens[0].join_token
    stub = agent_pb2_grpc.AgentServiceStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.CallTool(
            agent_pb2.CallToolRequest(
                session_id=sid,
                token=token,
                call=agent_pb2.ToolCall(call_id="u", tool=tool, args=struct(args)),
            )
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value.details()
    info, violations = details(rpc_status.from_call(err.value))
    assert info.reason == "INVALID_ARGUMENTS" and info.metadata["tool"] == tool
    assert (field, "a finite number") in violations
    client = AgentClient(channel)
    await client.join(sid, token)
    reply = await client.result_or_error(client.tool(tool, args))
    assert reply.WhichOneof("response") == "error"
    assert reply.error.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert details(reply.error)[1] == violations
    client.close()


def _timeout(seconds: float) -> dict[str, object]:
    return {"limits": common_pb2.SessionLimits(turn_timeout_seconds=seconds)}


TIMEOUT_FIELD = "limits.turn_timeout_seconds"
BOUNDED = {
    "timeout-tiny": (_timeout(0.001), TIMEOUT_FIELD),
    "timeout-negative": (_timeout(-1), TIMEOUT_FIELD),
    "timeout-huge": (_timeout(1e9), TIMEOUT_FIELD),
    "timeout-nan": (_timeout(float("nan")), TIMEOUT_FIELD),
    "seed-negative": ({"seed": -1}, "seed"),
    "seed-huge": ({"seed": 2**40}, "seed"),
    "spirit-nan": ({"team_spirit": float("nan")}, "team_spirit"),
    "spirit-high": ({"team_spirit": 2.0}, "team_spirit"),
}


@pytest.mark.parametrize(("fields", "field"), list(BOUNDED.values()), ids=list(BOUNDED))
async def test_every_number_of_create_session_is_bounded(
    control, fields: dict[str, object], field: str
) -> None:
    """Issue 17: turn_timeout_seconds 0.001 made a ROUND_ROBIN session log hundreds of turns a
    second. Each numeric field has bounds, named in the error (and in the proto comments)."""
    request = control_pb2.CreateSessionRequest(scenario_id=PAY_ID, **fields)  # type: ignore[arg-type]
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await control.CreateSession(request)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    _info, violations = details(rpc_status.from_call(err.value))
    assert [f for f, _ in violations] == [field], violations
    assert any(ch.isdigit() for _, want in violations for ch in want), violations  # the bounds
    if field == "team_spirit":  # says what was sent, not a stand-in
        assert "-1.0" not in err.value.details()


PAY_ID = "meta-sre/payment-bad-deploy-v2"


async def test_what_does_not_exist_is_an_error_not_silence(channel, control) -> None:
    """Issue 17: allowed_tools naming no tool was accepted; GetTrajectory of episode 99 or -1
    answered an empty list; WatchSession of episode 99 waited for ever."""
    bad = control_pb2.CreateSessionRequest(
        scenario_id=PAY_ID,
        seats=[common_pb2.SeatConfig(agent_id="a", allowed_tools=["read_logs", "no_such_tool"])],
    )
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await control.CreateSession(bad)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no_such_tool" in err.value.details() and "list_files" in err.value.details()

    sid = (await create(control, ("a",))).session.session_id
    for episode in (99, -1, 2):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await control.GetTrajectory(
                control_pb2.GetTrajectoryRequest(session_id=sid, episode=episode)
            )
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, episode
        assert "episode" in err.value.details()
    assert (await control.GetTrajectory(control_pb2.GetTrajectoryRequest(session_id=sid))).events
    watch = watch_pb2_grpc.WatchServiceStub(channel).WatchSession(
        watch_pb2.WatchSessionRequest(session_id=sid, episode=99)
    )
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await asyncio.wait_for(watch.read(), TIMEOUT)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_refusals_read_as_plain_english(channel, control) -> None:
    """Issue 17 (messages): "it is 'a''s turn" doubled its quotes; a seat with no role was
    shown as "role '-'"."""
    created = await create(control, ("a", "b"), policy=common_pb2.TURN_POLICY_ROUND_ROBIN)
    sid = created.session.session_id
    b = AgentClient(channel)
    await b.join(sid, created.tokens[1].join_token)
    reply = await b.result_or_error(b.tool("get_alerts"))
    assert reply.WhichOneof("response") == "error"
    assert "the turn of 'a', not of 'b'" in reply.error.message
    assert "''" not in reply.error.message
    b.close()

    plain = control_pb2.CreateSessionRequest(
        scenario_id=PAY_ID,
        seats=[common_pb2.SeatConfig(agent_id="solo", allowed_tools=["get_alerts"])],
    )
    made = await control.CreateSession(plain)
    solo = AgentClient(channel)
    await solo.join(made.session.session_id, made.tokens[0].join_token)
    refused = await solo.result_or_error(solo.tool("read_logs", {"service": "payment-service"}))
    assert "seat 'solo' (no role) may not use 'read_logs'" in refused.error.message
    solo.close()


@pytest.mark.parametrize(
    ("retired", "family"),
    [
        ("meta-sre/ad-ranking-crash-v1", "meta-sre/ad-ranking-crash-v2"),
        ("meta-sre/payment-bad-deploy-v1", "meta-sre/payment-bad-deploy-v2"),
        ("meta-sre/user-service-oom-v1", "meta-sre/user-service-oom-v2"),
    ],
)
async def test_a_retired_id_is_refused_with_the_family_that_replaced_it(control, retired, family):
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await create(control, ("a",), scenario=retired)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert details(rpc_status.from_call(err.value))[0].reason == "SCENARIO_NOT_FOUND"
    text = err.value.details() or ""
    assert "retired" in text and family in text
    # the unversioned name reaches the family
    reply = await create(control, ("a",), scenario=retired.split("/")[1].rsplit("-v", 1)[0])
    assert reply.session.scenario_id == family
