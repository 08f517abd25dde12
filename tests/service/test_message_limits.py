"""Messages over the server's limit: a clear refusal naming the limit, and a seat's fate that
does not depend on timing.

Before, gRPC itself cut off a Connect stream that sent an oversized message, and re-joining
0.3 s later worked or got SEAT_TAKEN for a minute, at random (the server cannot tell such a
cut from a dropped client, nor reliably from a half-close). Now a message up to
`RECEIVE_SLACK` times the limit is refused in-band (the stream goes on), and after any stream
end the seat's own join or resume token takes it back at once.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest
from grpc_status import rpc_status

from metasre.service import Limits
from metasre.service.wire.undecodable import RECEIVE_SLACK
from metasre.v1 import agent_pb2, agent_pb2_grpc, control_pb2, control_pb2_grpc

from .conftest import TIMEOUT, AgentClient, create, details, struct
from .test_limits import serving

LIMIT = 64 * 1024


def big_call(size: int, call_id: str = "big") -> agent_pb2.ToolCall:
    return agent_pb2.ToolCall(
        call_id=call_id, tool="read_logs", args=struct({"service": "x" * size})
    )


async def test_a_message_over_the_limit_is_refused_in_band_and_the_stream_goes_on():
    async with serving(Limits(max_message_bytes=LIMIT)) as (_, channel):
        control = control_pb2_grpc.ControlServiceStub(channel)
        info = await control.GetServerInfo(control_pb2.GetServerInfoRequest())
        assert info.limits.max_message_bytes == LIMIT  # published, so clients can size calls
        created = await create(control, ("a",))
        client = AgentClient(channel)
        await client.join(created.session.session_id, created.tokens[0].join_token)
        client.send(agent_pb2.ConnectRequest(call=big_call(2 * LIMIT)))
        refused = (await client.expect("error")).error
        assert refused.code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
        info_, violations = details(refused)
        assert violations == [("request", f"at most {LIMIT} bytes")]
        assert info_.reason == "MESSAGE_TOO_LARGE"
        assert info_.metadata["max_message_bytes"] == str(LIMIT)
        assert f"at most {LIMIT} bytes" in refused.message
        reply = await client.result_or_error(client.tool("get_alerts"))
        assert reply.result.tick == 1
        client.close()


async def test_a_unary_call_over_the_limit_is_refused_naming_the_limit():
    async with serving(Limits(max_message_bytes=LIMIT)) as (_, channel):
        control = control_pb2_grpc.ControlServiceStub(channel)
        created = await create(control, ("a",))
        agent = agent_pb2_grpc.AgentServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await agent.CallTool(
                agent_pb2.CallToolRequest(
                    session_id=created.session.session_id,
                    token=created.tokens[0].join_token,
                    call=big_call(2 * LIMIT),
                )
            )
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        status = rpc_status.from_call(err.value)
        assert status is not None and details(status)[0].reason == "MESSAGE_TOO_LARGE"


async def test_after_grpc_cuts_a_far_too_large_message_the_seat_is_taken_back_at_once():
    async with serving(Limits(max_message_bytes=LIMIT, seat_grace_seconds=60)) as (_, channel):
        control = control_pb2_grpc.ControlServiceStub(channel)
        for round_ in range(6):  # the old fate changed from one try to the next
            created = await create(control, ("a",))
            sid, token = created.session.session_id, created.tokens[0].join_token
            client = AgentClient(channel)
            joined = await client.join(sid, token)
            client.send(agent_pb2.ConnectRequest(call=big_call(RECEIVE_SLACK * LIMIT + 1)))
            with pytest.raises(grpc.aio.AioRpcError) as cut:
                while True:
                    await client.receive()
            assert cut.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            # Join and resume both take the seat back at once, every time.
            again = AgentClient(channel)
            if round_ % 2:
                assert (await again.join(sid, token)).agent_id == "a"
            else:
                again.send(
                    agent_pb2.ConnectRequest(
                        resume=agent_pb2.ResumeSeat(
                            session_id=sid, resume_token=joined.resume_token
                        )
                    )
                )
                await again.expect("joined")
                again.agent_id = "a"
            reply = await asyncio.wait_for(
                again.result_or_error(again.tool("get_alerts", call_id=f"after{round_}")),
                TIMEOUT,
            )
            assert reply.WhichOneof("response") == "result"
            again.close()
