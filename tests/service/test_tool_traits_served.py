"""What the service does with a call follows the tool's traits and effects, so a tool added to
the tool package (get_events) is served with no edit here."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from grpc_status import rpc_status

from metasre.agents.client import may_call
from metasre.agents.plain import to_dict
from metasre.service.core import coordinator
from metasre.service.core.coordinator import make_episode
from metasre.simulator import TOOLS, resolve
from metasre.simulator.views import View, owners_of, refusal
from metasre.v1 import agent_pb2, agent_pb2_grpc, control_pb2

from .conftest import PAY, AgentClient, create, details, struct


async def test_an_added_tool_is_listed_validated_and_applied(control, channel):
    listed = {t.name: t for t in (await control.ListTools(control_pb2.ListToolsRequest())).tools}
    spec = listed["get_events"]
    assert spec.kind == "investigate" and spec.minutes == TOOLS["get_events"].minutes
    schema = json_format.MessageToDict(spec.input_schema)
    assert schema == TOOLS["get_events"].json_schema()

    created = await create(control, ("a",))
    sid, token = created.session.session_id, created.tokens[0].join_token
    stub = agent_pb2_grpc.AgentServiceStub(channel)

    async def call(args: dict[str, Any]) -> agent_pb2.CallToolResponse:
        tool_call = agent_pb2.ToolCall(tool="get_events", args=struct(args))
        request = agent_pb2.CallToolRequest(session_id=sid, token=token, call=tool_call)
        return await stub.CallTool(request)

    reply = await call({"since_minutes": 43_200})
    assert reply.result.ok and "deployed" in reply.result.text
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call({"kind": "reboot"})
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    (field, description), *_ = details(rpc_status.from_call(refused.value))[1]
    assert field == "args.kind" and "hotfix" in description


async def test_the_inline_trait_decides_the_quick_path():
    episode = await make_episode(PAY, 0, None)
    for tool in TOOLS.values():
        call = [("a", tool.name, {})]
        assert coordinator._quick(episode, call) == tool.inline, tool.name
    # Two calls of a round, or the call that spends the last step, go to a thread.
    assert not coordinator._quick(episode, [("a", "get_events", {})] * 2)


@pytest.mark.parametrize("to", [None, ["b"]])
async def test_a_message_effect_becomes_a_message_event(control, channel, to):
    created = await create(control, ("a", "b"))
    sid = created.session.session_id
    a, b = AgentClient(channel), AgentClient(channel)
    await a.join(sid, created.tokens[0].join_token)
    await b.join(sid, created.tokens[1].join_token)
    await a.result_or_error(a.tool("send_message", {"text": "db is fine", "to": to}))
    heard = await b.expect("message")
    assert (heard.message.from_agent_id, heard.message.text) == ("a", "db is fine")
    assert list(heard.message.to) == (to or ["*"])


async def test_a_client_judges_a_view_by_the_traits_list_tools_serves(control):
    """The SDK's `may_call`, fed ListTools as a client gets it, agrees with the server's rule
    for every tool, on views that hide each system, some services, or nothing."""
    listed = [to_dict(t) for t in (await control.ListTools(control_pb2.ListToolsRequest())).tools]
    assert {t["name"] for t in listed} == set(TOOLS)
    for tool in listed:
        traits = TOOLS[tool["name"]]
        assert set(tool["needs"]) == traits.needs
        assert tuple(tool["service_args"]) == traits.service_args
        assert tool["gives_hints"] == traits.gives_hints
    spec = resolve(PAY).spec(0)
    names = [s.name for s in spec.services]
    views = [
        View(),
        View(code=False),
        View(data=False),
        View(deploys=False),
        View(services=tuple(names[:2])),
        View(services=tuple(names[:1]), code=False, deploys=False),
    ]
    for view in views:
        plain = {"services": list(view.services) if view.services else None}
        plain |= {"code": view.code, "data": view.data, "deploys": view.deploys}
        for tool in listed:
            for service in [None, names[0], names[-1]]:
                args = {} if service is None else {"service": service}
                served = TOOLS[tool["name"]]
                expected = not refusal(view, served, args, owners_of(spec))
                assert may_call(plain, tool, args) == expected, (view, tool["name"], args)
