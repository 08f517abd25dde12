"""Health, reflection, the admin token, garbage from clients, SIGTERM drain, fresh stubs."""

from __future__ import annotations

import asyncio
import importlib.util
import random
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status

from metasre.service import Limits, ServerConfig, build_server
from metasre.v1 import (
    agent_pb2,
    agent_pb2_grpc,
    control_pb2,
    control_pb2_grpc,
    watch_pb2,
    watch_pb2_grpc,
)

from .conftest import TIMEOUT, AgentClient, create, details, one_call, struct
from .serve_process import metasre_serve


async def test_health_answers_serving(channel):
    stub = health_pb2_grpc.HealthStub(channel)
    for service in ("", "metasre.v1.AgentService", "metasre.v1.ControlService"):
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_health_watch_streams_the_status_until_the_server_drains(server):
    """Kubernetes and grpc-health-probe watch rather than poll (issue 17: Watch used to fail at
    once with a Python TypeError in its status)."""
    async with grpc.aio.insecure_channel(server.address) as channel:
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())
        first = await asyncio.wait_for(watch.read(), TIMEOUT)
        assert first.status == health_pb2.HealthCheckResponse.SERVING
        stopping = asyncio.create_task(server.stop(1.0))
        second = await asyncio.wait_for(watch.read(), TIMEOUT)
        assert second.status == health_pb2.HealthCheckResponse.NOT_SERVING
        watch.cancel()
        await stopping


async def test_reflection_v1_is_served_beside_v1alpha(channel):
    method = channel.stream_stream(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )

    async def ask():
        yield reflection_pb2.ServerReflectionRequest(list_services="")
        yield reflection_pb2.ServerReflectionRequest(
            file_containing_symbol="metasre.v1.ControlService"
        )

    replies = [r async for r in method(ask())]
    names = {s.name for s in replies[0].list_services_response.service}
    assert {"grpc.reflection.v1.ServerReflection", "metasre.v1.ControlService"} <= names
    assert replies[1].file_descriptor_response.file_descriptor_proto


async def test_reflection_lists_the_services(channel):
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)

    async def ask():
        yield reflection_pb2.ServerReflectionRequest(list_services="")
        yield reflection_pb2.ServerReflectionRequest(
            file_containing_symbol="metasre.v1.AgentService"
        )

    replies = [r async for r in stub.ServerReflectionInfo(ask())]
    names = {s.name for s in replies[0].list_services_response.service}
    assert {
        "metasre.v1.ControlService",
        "metasre.v1.AgentService",
        "metasre.v1.WatchService",
        "grpc.health.v1.Health",
    } <= names
    assert replies[1].file_descriptor_response.file_descriptor_proto


async def test_admin_token_guards_control_calls():
    server = await build_server(ServerConfig(port=0, admin_token="s3cret", grace_seconds=0.2))
    await server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            request = control_pb2.ListSessionsRequest()
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await control.ListSessions(request)
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
            good = (("authorization", "Bearer s3cret"),)
            await create(control, ("a",), metadata=good)
            # another token lists what it owns: nothing; the admin's lists every session
            other = await control.ListSessions(request, metadata=(("authorization", "Bearer no"),))
            assert list(other.sessions) == []
            listed = await control.ListSessions(request, metadata=good)
            assert len(listed.sessions) == 1
    finally:
        await server.stop(0.2)


async def test_admin_token_guards_watch_calls_but_not_agents():
    server = await build_server(ServerConfig(port=0, admin_token="s3cret", grace_seconds=0.2))
    await server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            good = (("authorization", "Bearer s3cret"),)
            control = control_pb2_grpc.ControlServiceStub(channel)
            created = await create(control, ("a",), metadata=good)
            sid = created.session.session_id
            watch = watch_pb2_grpc.WatchServiceStub(channel)
            request = watch_pb2.WatchSessionRequest(session_id=sid)
            # No token, a wrong one, and the right one without the Bearer scheme.
            for header, code, reason in (
                (None, grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING"),
                ("Bearer no", grpc.StatusCode.NOT_FOUND, "SESSION_NOT_FOUND"),
                ("s3cret", grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING"),
            ):
                metadata = (("authorization", header),) if header else ()
                refused = watch.WatchSession(request, metadata=metadata)
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await asyncio.wait_for(refused.read(), TIMEOUT)
                assert err.value.code() == code
                assert details(rpc_status.from_call(err.value))[0].reason == reason
            # Agents need only their seat's token; the watcher with the admin token sees the call.
            client = AgentClient(channel)
            await client.join(sid, created.tokens[0].join_token)
            reply = await client.result_or_error(client.tool("get_alerts"))
            assert reply.result.tick == 1
            allowed = watch.WatchSession(request, metadata=good)
            event = (await asyncio.wait_for(allowed.read(), TIMEOUT)).event
            while event.WhichOneof("event") != "applied":
                event = (await asyncio.wait_for(allowed.read(), TIMEOUT)).event
            assert (event.applied.agent_id, event.tick) == ("a", 1)
            allowed.cancel()
            client.close()
    finally:
        await server.stop(0.2)


@pytest.fixture
def config() -> ServerConfig:
    return ServerConfig(port=0, limits=Limits(max_message_bytes=64 * 1024), grace_seconds=0.5)


async def test_garbage_gets_clear_errors_and_the_server_stays_up(channel, control):
    created = await create(control, ("a",))
    sid = created.session.session_id
    client = AgentClient(channel)
    await client.join(sid, created.tokens[0].join_token)
    rng = random.Random(7)
    for i in range(5):
        junk = rng.randbytes(200).decode("latin-1")
        args = {"service": junk, junk[:10]: [junk, {"x": junk}], "lines": rng.random() * 1e300}
        msg = await client.result_or_error(client.tool("read_logs", args, call_id=f"junk-{i}"))
        assert msg.WhichOneof("response") in ("error", "result")
        if msg.WhichOneof("response") == "error":
            assert details(msg.error)[0].reason in ("INVALID_ARGUMENTS", "UNKNOWN_TOOL")
    # An empty request and a tool name of random bytes.
    client.send(agent_pb2.ConnectRequest())
    assert details((await client.expect("error")).error)[0].reason == "INVALID_REQUEST"
    msg = await client.result_or_error(client.tool(rng.randbytes(50).decode("latin-1")))
    assert details(msg.error)[0].reason == "UNKNOWN_TOOL"
    ok = await client.result_or_error(client.tool("get_alerts"))
    assert ok.WhichOneof("response") == "result"

    # A message over the limit ends that call with RESOURCE_EXHAUSTED, nothing else.
    stub = agent_pb2_grpc.AgentServiceStub(channel)
    huge = agent_pb2.CallToolRequest(
        session_id=sid,
        token=created.tokens[0].join_token,
        call=agent_pb2.ToolCall(tool="read_logs", args=struct({"service": "x" * 200_000})),
    )
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.CallTool(huge)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED

    # Bytes that are not a protobuf message at all.
    raw = channel.unary_unary("/metasre.v1.AgentService/CallTool")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await raw(b"\xff\xfe garbage \x00\x01" * 10)
    assert err.value.code() != grpc.StatusCode.OK

    info = await control.GetServerInfo(control_pb2.GetServerInfoRequest())
    assert info.protocol_version == "metasre.v1"
    ok = await client.result_or_error(client.tool("get_alerts"))
    assert ok.result.tick == 2
    client.close()


async def test_sigterm_drains_a_real_server():
    async with (
        metasre_serve() as served,
        grpc.aio.insecure_channel(served.address) as channel,
    ):
        client = await one_call(channel)
        # The process exits 0 once drained; the seat's stream ends UNAVAILABLE, saying the
        # server shut down and the session is closed (agent.proto's SERVER_DRAINING).
        assert await served.stop() == 0
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            while (await asyncio.wait_for(client.call.read(), TIMEOUT)) is not grpc.aio.EOF:
                pass
        assert ended.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "shutting down" in (ended.value.details() or "")
    events = [e["event"] for e in served.events()]
    assert "draining" in events and "stopped" in events


def _generator() -> Any:
    """protos/generate.py, the development tool (not in the package), loaded from its file."""
    path = Path(__file__).resolve().parents[2] / "protos" / "generate.py"
    spec = importlib.util.spec_from_file_location("metasre_protos_generate", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_stubs_are_fresh(tmp_path: Path):
    generator = _generator()
    generated = generator.generate(tmp_path)
    assert generated, "protoc wrote nothing"
    for path in generated:
        committed = generator.PACKAGE_DIR / path.name
        assert committed.exists(), f"{path.name} is not committed; run python protos/generate.py"
        assert committed.read_bytes() == path.read_bytes(), (
            f"{path.name} is stale; run python protos/generate.py"
        )
    names = {p.name for p in generated}
    stale = {
        p.name
        for p in generator.PACKAGE_DIR.iterdir()
        if p.name.endswith(("_pb2.py", "_pb2.pyi", "_pb2_grpc.py"))
    } - names
    assert not stale, f"stubs without a proto: {stale}"
