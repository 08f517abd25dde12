"""send_message names its recipients among the session's seats: a message to nobody is refused.

A real server on 127.0.0.1: the wire-only SDK's stream, and a plain unary CallTool.
"""

from __future__ import annotations

import grpc
import pytest

from metasre.agents import ClientError, MetasreClient
from metasre.v1 import agent_pb2, agent_pb2_grpc

from .conftest import PAY, create, struct


async def test_a_message_to_an_unknown_agent_is_refused_naming_the_team(server):
    async with MetasreClient(server.address) as client:
        handle = await client.create_session(PAY, seats=["commander", "fixer"])
        async with (
            client.agent(handle.id, handle.tokens["commander"]) as commander,
            client.agent(handle.id, handle.tokens["fixer"]) as fixer,
        ):
            with pytest.raises(ClientError) as refused:
                await commander.call("send_message", {"text": "roll back", "to": ["fixr"]})
            error = refused.value
            assert (error.code, error.reason) == ("INVALID_ARGUMENT", "INVALID_ARGUMENTS")
            assert "'fixr'" in error.message and "commander, fixer" in error.message
            assert [f for f, _ in error.violations] == ["args.to"]
            # Refused before it reached the episode: it cost no step, and the stream goes on.
            sent = await commander.call("send_message", {"text": "roll back", "to": ["fixer"]})
            assert sent.ok and sent.tick == 1
            everyone = await commander.call("send_message", {"text": "on it", "to": ["*"]})
            assert everyone.ok and everyone.tick == 2
            while len(fixer.inbox.messages) < 2:
                await fixer.next_news(fixer.news, 10)
            assert [m["text"] for m in fixer.inbox.messages] == ["roll back", "on it"]


async def test_call_tool_refuses_a_message_to_nobody_too(channel, control):
    created = await create(control, ("a", "b"))
    stub = agent_pb2_grpc.AgentServiceStub(channel)
    request = agent_pb2.CallToolRequest(
        session_id=created.session.session_id,
        token=created.tokens[0].join_token,
        call=agent_pb2.ToolCall(
            call_id="m-1", tool="send_message", args=struct({"text": "hi", "to": ["a", "zed"]})
        ),
    )
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.CallTool(request)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "'zed'" in refused.value.details() and "a, b" in refused.value.details()
