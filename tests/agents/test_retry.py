"""The SDK's retries: a server handing over is waited out, a server at capacity is backed off.

The client-side policy is tested against a small real grpc.aio server on 127.0.0.1 that refuses
as a server would (UNAVAILABLE `SERVER_HANDING_OVER`; RESOURCE_EXHAUSTED `SERVER_AT_CAPACITY`
with `google.rpc.RetryInfo`), and the handover end to end against real `metasre serve
--handover` processes: an agent's call spans the SIGTERM of one server and the start of the
next, and the caller only sees its result.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2

from metasre.agents import ClientError, ConnectionLostError, MetasreClient
from metasre.agents.retry import RetryPolicy
from metasre.service.process import start_serve
from metasre.v1 import agent_pb2, agent_pb2_grpc, control_pb2, control_pb2_grpc

PAY = "meta-sre/payment-bad-deploy-v2"
TIMEOUT = 60.0
FAST = RetryPolicy(initial_backoff=0.01, max_backoff=0.05, handover_timeout=TIMEOUT)


def refusal(code: int, reason: str, retry_after: float | None = None) -> status_pb2.Status:
    status = status_pb2.Status(code=code, message=f"refused: {reason}")
    status.details.add().Pack(error_details_pb2.ErrorInfo(reason=reason, domain="metasre.dev"))
    if retry_after is not None:
        delay = duration_pb2.Duration()
        delay.FromTimedelta(datetime.timedelta(seconds=retry_after))
        status.details.add().Pack(error_details_pb2.RetryInfo(retry_delay=delay))
    return status


HANDING_OVER = refusal(code_pb2.UNAVAILABLE, "SERVER_HANDING_OVER")


async def abort(context: grpc.aio.ServicerContext[Any, Any], status: status_pb2.Status) -> None:
    await context.abort(
        grpc.StatusCode.UNAVAILABLE
        if status.code == code_pb2.UNAVAILABLE
        else grpc.StatusCode.RESOURCE_EXHAUSTED,
        status.message,
        trailing_metadata=(("grpc-status-details-bin", status.SerializeToString()),),
    )


class Control(control_pb2_grpc.ControlServiceServicer):
    """Refuses the first `refusals` calls of each method with `status`, then answers."""

    def __init__(self, status: status_pb2.Status, refusals: int) -> None:
        self.status = status
        self.refusals = refusals
        self.seen: list[tuple[str, float]] = []

    async def _refuse(self, method: str, context: Any) -> None:
        self.seen.append((method, asyncio.get_running_loop().time()))
        if len([m for m, _ in self.seen if m == method]) <= self.refusals:
            await abort(context, self.status)

    async def CreateSession(self, request: Any, context: Any) -> Any:
        await self._refuse("CreateSession", context)
        reply = control_pb2.CreateSessionResponse(owner_token=request.owner_token)
        reply.session.session_id = "s-1"
        return reply

    async def GetGrade(self, request: Any, context: Any) -> Any:
        await self._refuse("GetGrade", context)
        return control_pb2.GetGradeResponse()


class Agents(agent_pb2_grpc.AgentServiceServicer):
    """A seat whose first stream ends SERVER_HANDING_OVER on the agent's first call."""

    def __init__(self, refuse_first_join: bool = False) -> None:
        self.streams: list[list[agent_pb2.ConnectRequest]] = []
        self.refuse_first_join = refuse_first_join

    async def Connect(
        self, request_iterator: AsyncIterator[agent_pb2.ConnectRequest], context: Any
    ) -> AsyncIterator[agent_pb2.ConnectResponse]:
        heard: list[agent_pb2.ConnectRequest] = []
        self.streams.append(heard)
        async for request in request_iterator:
            heard.append(request)
            kind = request.WhichOneof("request")
            if kind == "join" and self.refuse_first_join:
                self.refuse_first_join = False
                yield agent_pb2.ConnectResponse(error=HANDING_OVER)
            elif kind in ("join", "resume"):
                yield agent_pb2.ConnectResponse(
                    joined=agent_pb2.Joined(agent_id="a", resume_token="r-1")
                )
            elif kind == "call":
                if len(self.streams) == 1:
                    await abort(context, HANDING_OVER)
                yield agent_pb2.ConnectResponse(
                    call_id=request.call.call_id,
                    result=agent_pb2.ToolResult(call_id=request.call.call_id, tick=1, ok=True),
                )


@pytest.fixture
async def fake() -> AsyncIterator[tuple[str, grpc.aio.Server]]:
    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    yield f"127.0.0.1:{port}", server
    await server.stop(None)


async def start(server: grpc.aio.Server, *servicers: Any) -> None:
    for servicer in servicers:
        if isinstance(servicer, Control):
            control_pb2_grpc.add_ControlServiceServicer_to_server(servicer, server)
        else:
            agent_pb2_grpc.add_AgentServiceServicer_to_server(servicer, server)
    await server.start()


async def test_a_server_at_capacity_is_backed_off_for_its_retry_delay(fake):
    address, server = fake
    control = Control(refusal(code_pb2.RESOURCE_EXHAUSTED, "SERVER_AT_CAPACITY", 0.05), 2)
    await start(server, control)
    async with MetasreClient(address, retry=FAST) as client:
        handle = await client.create_session(PAY)
    assert handle.id == "s-1"
    times = [t for _, t in control.seen]
    assert len(times) == 3  # two refusals, then the session
    assert all(b - a >= 0.05 for a, b in itertools.pairwise(times))


async def test_a_server_at_capacity_is_tried_a_bounded_number_of_times(fake):
    address, server = fake
    control = Control(refusal(code_pb2.RESOURCE_EXHAUSTED, "SERVER_AT_CAPACITY", 0.01), 100)
    await start(server, control)
    async with MetasreClient(address, retry=RetryPolicy(max_attempts=3)) as client:
        with pytest.raises(ClientError) as refused:
            await client.create_session(PAY)
    assert len(control.seen) == 3
    assert refused.value.reason == "SERVER_AT_CAPACITY"
    assert refused.value.retry_delay == pytest.approx(0.01)


async def test_the_server_s_retry_delay_is_capped_by_the_policy(fake):
    address, server = fake
    control = Control(refusal(code_pb2.RESOURCE_EXHAUSTED, "SERVER_AT_CAPACITY", 3600), 1)
    await start(server, control)
    async with MetasreClient(address, retry=RetryPolicy(max_retry_delay=0.01)) as client:
        assert (await client.create_session(PAY)).id == "s-1"
    assert len(control.seen) == 2


@pytest.mark.parametrize(
    "status",
    [
        refusal(code_pb2.RESOURCE_EXHAUSTED, "SESSION_FULL"),  # no RetryInfo: will not pass
        refusal(code_pb2.UNAVAILABLE, "SERVER_DRAINING"),
    ],
    ids=["full-without-retry-info", "draining"],
)
async def test_other_refusals_are_raised_at_once(fake, status):
    address, server = fake
    control = Control(status, 100)
    await start(server, control)
    async with MetasreClient(address, retry=FAST) as client:
        with pytest.raises(ClientError):
            await client.create_session(PAY)
    assert len(control.seen) == 1


async def test_a_unary_call_is_retried_through_a_handover(fake):
    address, server = fake
    control = Control(HANDING_OVER, 3)
    await start(server, control)
    async with MetasreClient(address, retry=FAST) as client:
        await client.get_grade("s-1")
    assert [m for m, _ in control.seen] == ["GetGrade"] * 4
    # ... unless the client says not to.
    control.seen.clear()
    async with MetasreClient(address, retry=RetryPolicy.never()) as client:
        with pytest.raises(ClientError) as refused:
            await client.get_grade("s-1")
    assert refused.value.code == "UNAVAILABLE" and refused.value.reason == "SERVER_HANDING_OVER"


async def test_a_handover_gives_up_after_its_timeout(fake):
    address, server = fake
    control = Control(HANDING_OVER, 10_000)
    await start(server, control)
    policy = RetryPolicy(initial_backoff=0.01, max_backoff=0.02, handover_timeout=0.2)
    async with MetasreClient(address, retry=policy) as client:
        with pytest.raises(ClientError) as refused:
            await client.get_grade("s-1")
    assert refused.value.reason == "SERVER_HANDING_OVER"
    times = [t for _, t in control.seen]
    assert times[-1] - times[0] <= 0.2 + 0.1 and len(times) > 2


async def test_an_agent_call_resumes_its_seat_and_is_sent_again_under_its_call_id(fake):
    address, server = fake
    agents = Agents()
    await start(server, agents)
    async with MetasreClient(address, retry=FAST) as client:
        conn = client.agent("s-1", "join-token")
        await conn.join()
        result = await conn.call("get_alerts", call_id="only-once")
        await conn.close()
    assert result.ok and result.call_id == "only-once"
    first, second = agents.streams
    assert [r.WhichOneof("request") for r in first] == ["join", "call"]
    assert [r.WhichOneof("request") for r in second] == ["resume", "call"]
    assert second[0].resume.resume_token == "r-1"
    assert first[1].call.call_id == second[1].call.call_id == "only-once"


async def test_a_join_is_retried_through_a_handover(fake):
    address, server = fake
    agents = Agents(refuse_first_join=True)
    await start(server, agents)
    async with MetasreClient(address, retry=FAST) as client:
        conn = client.agent("s-1", "join-token")
        assert (await conn.join())["agent_id"] == "a"
        # The refused stream may end after the new one opened: its end fails none of the
        # new stream's calls.
        assert (await conn.call("get_alerts", call_id="after")).ok
        await conn.close()
    assert [[r.WhichOneof("request") for r in heard] for heard in agents.streams] == [
        ["join"],
        ["join", "call"],
    ]


def test_a_policy_refuses_nonsense():
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError, match="handover_timeout"):
        RetryPolicy(handover_timeout=float("nan"))


async def test_a_call_spans_a_real_handover_to_the_next_server(tmp_path: Path):
    db = tmp_path / "store.db"
    fast_reconnect = (
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.min_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 200),
    )
    first, address = await start_serve(
        "--port", "0", "--store", str(db), "--handover", cwd=tmp_path, timeout=TIMEOUT
    )
    port = address.rpartition(":")[2]
    second = None
    try:
        async with MetasreClient(address, options=fast_reconnect, retry=FAST) as client:
            handle = await client.create_session(PAY, seed=2, seats=["a"])
            agent = client.agent(handle.id, handle.tokens["a"])
            await agent.join()
            assert (await agent.call("get_alerts")).tick == 1
            first.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(first.wait(), TIMEOUT) == 0
            # The stream ended SERVER_HANDING_OVER, and no server listens: the call waits for
            # the next one instead of failing.
            call = asyncio.create_task(agent.call("read_logs", {"service": "payment-service"}))
            second, _ = await start_serve(
                "--port", port, "--store", str(db), "--handover", cwd=tmp_path, timeout=TIMEOUT
            )
            result = await asyncio.wait_for(call, TIMEOUT)
            assert result.ok and result.tick == 2
            await agent.close()
    finally:
        for proc in (first, second):
            if proc is not None and proc.returncode is None:
                proc.kill()
                await proc.wait()


async def test_a_killed_server_is_not_retried(tmp_path: Path):
    # A vanished server said nothing about coming back: the loss is the caller's to handle.
    proc, address = await start_serve("--port", "0", cwd=tmp_path, timeout=TIMEOUT)
    try:
        async with MetasreClient(address, retry=FAST) as client:
            handle = await client.create_session(PAY, seats=["a"])
            agent = client.agent(handle.id, handle.tokens["a"])
            await agent.join()
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
            with pytest.raises(ConnectionLostError):
                await asyncio.wait_for(agent.call("get_alerts"), TIMEOUT)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_a_create_at_capacity_waits_on_a_real_server_and_makes_one_session():
    """A real server at capacity refuses with RetryInfo; the SDK waits it out, and its retries
    carry one request id, so one session is made however many tries it takes."""
    from metasre.service import Limits, ServerConfig, build_server

    server = await build_server(ServerConfig(port=0, limits=Limits(max_sessions=1)))
    await server.start()
    try:
        async with (
            MetasreClient(server.address) as holder,
            MetasreClient(server.address, retry=FAST) as waiter,
        ):
            first = await holder.create_session(PAY, seats=["a"])
            second = asyncio.create_task(waiter.create_session(PAY, seats=["b"]))
            while server.registry.refused_total == 0:  # state: its first try was refused
                await asyncio.sleep(0.01)
            assert not second.done()
            await holder.close_session(first.id)
            made = await asyncio.wait_for(second, TIMEOUT)
            assert [s.id for s in server.registry.sessions()] == [made.id]
    finally:
        await server.stop(0.5)
