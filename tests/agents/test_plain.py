"""`metasre.agents.plain.to_dict` gives what protobuf's JSON mapping gives, for every message a
played session sends and for the edge values the mapping writes specially."""

from __future__ import annotations

import math
import secrets
from typing import Any

import grpc
import pytest
from google.protobuf import json_format, struct_pb2

from metasre.agents.plain import to_dict
from metasre.simulator import resolve
from metasre.v1 import (
    agent_pb2,
    agent_pb2_grpc,
    common_pb2,
    control_pb2,
    control_pb2_grpc,
    watch_pb2,
    watch_pb2_grpc,
)

PAY = "meta-sre/payment-bad-deploy-v2"


def json_dict(message: Any) -> dict[str, Any]:
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def same(message: Any) -> None:
    assert to_dict(message) == json_dict(message), type(message).__name__


async def test_every_message_of_a_played_session_reads_as_json_format_reads_it(server):
    messages: list[Any] = []
    owner = secrets.token_urlsafe(24)
    mine = (("authorization", f"Bearer {owner}"),)
    async with grpc.aio.insecure_channel(server.address) as channel:
        control = control_pb2_grpc.ControlServiceStub(channel)
        messages.append(await control.GetServerInfo(control_pb2.GetServerInfoRequest()))
        messages.append(await control.ListScenarios(control_pb2.ListScenariosRequest()))
        messages.append(await control.ListTools(control_pb2.ListToolsRequest()))
        created = await control.CreateSession(
            control_pb2.CreateSessionRequest(
                scenario_id=PAY,
                seed=3,
                seats=[common_pb2.SeatConfig(agent_id=a, role=a) for a in ("a", "b")],
                owner_token=owner,
            )
        )
        messages.append(created)
        sid = created.session.session_id
        solution = [(s.tool, dict(s.args)) for s in resolve(PAY).instance(3).spec.solution]
        requests = [
            agent_pb2.ConnectRequest(
                join=agent_pb2.JoinSeat(
                    session_id=sid,
                    join_token=created.tokens[0].join_token,
                    options=agent_pb2.StreamOptions(batch_events=True),
                )
            ),
            agent_pb2.ConnectRequest(call=agent_pb2.ToolCall(call_id="bad", tool="nope")),
        ]
        for i, (tool, args) in enumerate(solution):
            data = struct_pb2.Struct()
            data.update(args)
            requests.append(
                agent_pb2.ConnectRequest(
                    call=agent_pb2.ToolCall(call_id=f"c{i}", tool=tool, args=data)
                )
            )
        stream = agent_pb2_grpc.AgentServiceStub(channel).Connect(iter(requests))
        kinds = set()
        async for response in stream:
            messages.append(response)
            kinds.add(response.WhichOneof("response"))
            if response.WhichOneof("response") == "batch":
                messages += list(response.batch.events)
                kinds |= {e.WhichOneof("response") for e in response.batch.events}
            if "episode_end" in kinds:
                break
        stream.cancel()
        assert {"joined", "error", "batch", "result", "reward", "episode_end"} <= kinds
        messages.append(
            await control.GetSession(control_pb2.GetSessionRequest(session_id=sid), metadata=mine)
        )
        messages.append(
            await control.GetGrade(control_pb2.GetGradeRequest(session_id=sid), metadata=mine)
        )
        messages.append(
            await control.GetTrajectory(
                control_pb2.GetTrajectoryRequest(session_id=sid), metadata=mine
            )
        )
        messages.append(
            await control.ListSessions(control_pb2.ListSessionsRequest(), metadata=mine)
        )
        watch = watch_pb2_grpc.WatchServiceStub(channel).WatchSession(
            watch_pb2.WatchSessionRequest(session_id=sid), metadata=mine
        )
        async for event in watch:
            messages.append(event)
            if event.event.WhichOneof("event") == "ended":
                break
        watch.cancel()
    assert len(messages) > 15
    for message in messages:
        same(message)


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf, -0.0, 1e308, 5e-324])
def test_doubles_that_json_cannot_hold_are_written_as_the_mapping_writes_them(number):
    same(common_pb2.ServiceStatus(name="x", error_rate=number, p99_ms=number))
    same(common_pb2.RewardUpdate(components={"k": number}, total=number))


def test_the_other_edge_values_read_as_json_format_reads_them():
    same(common_pb2.SessionInfo(seed=2**63 - 1))  # int64: a string in JSON
    same(common_pb2.SessionInfo(seed=-(2**63)))
    same(agent_pb2.ToolResult(phase=99))  # type: ignore[arg-type]  # an enum number unknown here
    same(common_pb2.Grade(fail_to_pass={"t1": True, "t2": False}))
    same(common_pb2.Grade())  # empty maps and lists, defaults
    same(agent_pb2.ConnectResponse())  # an empty oneof
    same(agent_pb2.ConnectResponse(batch=agent_pb2.EventBatch()))
    value = struct_pb2.Value(list_value=struct_pb2.ListValue(values=[struct_pb2.Value()]))
    data = struct_pb2.Struct()
    data.fields["v"].CopyFrom(value)
    data.fields["n"].null_value = struct_pb2.NULL_VALUE
    same(agent_pb2.ToolResult(data=data))
    same(data)
    same(value)


def test_the_protocol_s_messages_take_the_fast_path():
    # json_format stays the reference, not the route: only unusual types fall back to it.
    from metasre.agents import plain

    for message in (
        agent_pb2.ConnectResponse,
        common_pb2.Observation,
        control_pb2.ListToolsResponse,
    ):
        assert plain._converter(message.DESCRIPTOR) is not plain._slow
