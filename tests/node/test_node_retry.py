"""The Node client's retries, as the Python client's: a handover waited out, capacity backed off.

`node -e` runs agents/node/metasre.js against a small real grpc.aio server on 127.0.0.1 that
refuses as a server would (UNAVAILABLE `SERVER_HANDING_OVER`; RESOURCE_EXHAUSTED
`SERVER_AT_CAPACITY` with google.rpc.RetryInfo in the trailers), and against a real
`metasre serve` killed with SIGKILL: a dropped stream is an error marked `lost`.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import json
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2

from metasre.service.process import start_serve
from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2, control_pb2_grpc

from .conftest import ROOT, TIMEOUT

CLIENT = r"""
const { MetasreClient } = require("./agents/node/metasre");
const [address, mode] = process.argv.slice(1);
const retry = mode === "never" ? false : mode === "bounded" ? { maxAttempts: 3 } :
  { initialBackoffMs: 10, maxBackoffMs: 50 };
const client = new MetasreClient(address, { retry });
(async () => {
  if (mode === "capacity" || mode === "bounded") {
    return { session: (await client.createSession({ scenario_id: "x" })).session.session_id };
  }
  if (mode === "grade" || mode === "never") return await client.getGrade("s-1");
  const agent = client.agent("s-1", "join-token");
  await agent.join();
  if (mode === "stream") {
    const result = await agent.call("get_alerts", {}, { callId: "only-once" });
    agent.close();
    return { call_id: result.call_id, ok: result.ok };
  }
  // mode "killed": tell the test the seat is joined, then call once the server is gone.
  process.stderr.write("joined\n");
  await new Promise((resolve) => process.stdin.once("data", resolve));
  await agent.call("get_alerts");
})()
  .then((out) => process.stdout.write(JSON.stringify({ out })))
  .catch((e) => process.stdout.write(JSON.stringify({
    error: { code: e.code, reason: e.reason, retryDelayMs: e.retryDelayMs, lost: e.lost },
  })))
  .finally(() => { client.close(); process.stdin.destroy(); });
"""


def refusal(code: int, reason: str, retry_after: float | None = None) -> status_pb2.Status:
    status = status_pb2.Status(code=code, message=f"refused: {reason}")
    status.details.add().Pack(error_details_pb2.ErrorInfo(reason=reason, domain="metasre.dev"))
    if retry_after is not None:
        delay = duration_pb2.Duration()
        delay.FromTimedelta(datetime.timedelta(seconds=retry_after))
        status.details.add().Pack(error_details_pb2.RetryInfo(retry_delay=delay))
    return status


HANDING_OVER = refusal(code_pb2.UNAVAILABLE, "SERVER_HANDING_OVER")


async def abort(context: Any, status: status_pb2.Status) -> None:
    code = next(c for c in grpc.StatusCode if c.value[0] == status.code)
    await context.abort(
        code,
        status.message,
        trailing_metadata=(("grpc-status-details-bin", status.SerializeToString()),),
    )


class Control(control_pb2_grpc.ControlServiceServicer):
    """Refuses the first `refusals` calls with `status`, then answers."""

    def __init__(self, status: status_pb2.Status, refusals: int) -> None:
        self.status, self.refusals = status, refusals
        self.seen: list[float] = []

    async def _refuse(self, context: Any) -> None:
        self.seen.append(asyncio.get_running_loop().time())
        if len(self.seen) <= self.refusals:
            await abort(context, self.status)

    async def CreateSession(self, request: Any, context: Any) -> Any:
        await self._refuse(context)
        reply = control_pb2.CreateSessionResponse()
        reply.session.session_id = "s-1"
        return reply

    async def GetGrade(self, request: Any, context: Any) -> Any:
        await self._refuse(context)
        return control_pb2.GetGradeResponse()


class Agents(agent_pb2_grpc.AgentServiceServicer):
    """A seat whose first stream ends SERVER_HANDING_OVER on the agent's first call."""

    def __init__(self) -> None:
        self.streams: list[list[agent_pb2.ConnectRequest]] = []

    async def Connect(
        self, request_iterator: AsyncIterator[agent_pb2.ConnectRequest], context: Any
    ) -> AsyncIterator[agent_pb2.ConnectResponse]:
        heard: list[agent_pb2.ConnectRequest] = []
        self.streams.append(heard)
        async for request in request_iterator:
            heard.append(request)
            if request.WhichOneof("request") in ("join", "resume"):
                yield agent_pb2.ConnectResponse(
                    joined=agent_pb2.Joined(agent_id="a", resume_token="r-1")
                )
            elif request.WhichOneof("request") == "call":
                if len(self.streams) == 1:
                    await abort(context, HANDING_OVER)
                call_id = request.call.call_id
                yield agent_pb2.ConnectResponse(
                    call_id=call_id, result=agent_pb2.ToolResult(call_id=call_id, ok=True)
                )


async def run_client(node: str, address: str, mode: str) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        node, "-e", CLIENT, address, mode, cwd=ROOT, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(proc.communicate(), TIMEOUT)
    assert proc.returncode == 0
    return json.loads(out)


@pytest.fixture
async def fake() -> AsyncIterator[tuple[str, grpc.aio.Server]]:
    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    yield f"127.0.0.1:{port}", server
    await server.stop(None)


async def test_a_server_at_capacity_is_backed_off_for_its_retry_delay(node, fake):
    address, server = fake
    control = Control(refusal(code_pb2.RESOURCE_EXHAUSTED, "SERVER_AT_CAPACITY", 0.05), 2)
    control_pb2_grpc.add_ControlServiceServicer_to_server(control, server)
    await server.start()
    assert await run_client(node, address, "capacity") == {"out": {"session": "s-1"}}
    assert len(control.seen) == 3
    assert all(b - a >= 0.045 for a, b in itertools.pairwise(control.seen))


async def test_a_server_at_capacity_is_tried_a_bounded_number_of_times(node, fake):
    address, server = fake
    control = Control(refusal(code_pb2.RESOURCE_EXHAUSTED, "SERVER_AT_CAPACITY", 0.01), 100)
    control_pb2_grpc.add_ControlServiceServicer_to_server(control, server)
    await server.start()
    error = (await run_client(node, address, "bounded"))["error"]
    assert (error["code"], error["reason"]) == ("RESOURCE_EXHAUSTED", "SERVER_AT_CAPACITY")
    assert error["retryDelayMs"] == pytest.approx(10)
    assert len(control.seen) == 3


async def test_a_unary_call_is_retried_through_a_handover_unless_told_not_to(node, fake):
    address, server = fake
    control = Control(HANDING_OVER, 3)
    control_pb2_grpc.add_ControlServiceServicer_to_server(control, server)
    await server.start()
    assert "out" in await run_client(node, address, "grade")
    assert len(control.seen) == 4
    control.seen.clear()
    error = (await run_client(node, address, "never"))["error"]
    assert (error["code"], error["reason"]) == ("UNAVAILABLE", "SERVER_HANDING_OVER")
    assert len(control.seen) == 1


async def test_an_agent_call_resumes_its_seat_and_is_sent_again_under_its_call_id(node, fake):
    address, server = fake
    agents = Agents()
    agent_pb2_grpc.add_AgentServiceServicer_to_server(agents, server)
    await server.start()
    assert await run_client(node, address, "stream") == {
        "out": {"call_id": "only-once", "ok": True}
    }
    first, second = agents.streams
    assert [r.WhichOneof("request") for r in first] == ["join", "call"]
    assert [r.WhichOneof("request") for r in second] == ["resume", "call"]
    assert second[0].resume.resume_token == "r-1"
    assert first[1].call.call_id == second[1].call.call_id == "only-once"


async def test_a_killed_server_is_a_lost_stream(node, tmp_path: Path):
    proc, address = await start_serve("--port", "0", cwd=tmp_path, timeout=TIMEOUT)
    client = None
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            created = await control.CreateSession(
                control_pb2.CreateSessionRequest(
                    scenario_id="meta-sre/payment-bad-deploy-v2",
                    seats=[common_pb2.SeatConfig(agent_id="a")],
                )
            )
        sid, token = created.session.session_id, created.tokens[0].join_token
        seat = f"client.agent({json.dumps(sid)}, {json.dumps(token)})"
        script = CLIENT.replace('client.agent("s-1", "join-token")', seat)
        client = await asyncio.create_subprocess_exec(
            node,
            "-e",
            script,
            address,
            "killed",
            cwd=ROOT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert client.stderr is not None and client.stdin is not None
        assert await asyncio.wait_for(client.stderr.readline(), TIMEOUT) == b"joined\n"
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        client.stdin.write(b"go\n")
        out, _ = await asyncio.wait_for(client.communicate(), TIMEOUT)
        error = json.loads(out)["error"]
        assert error["lost"] is True and error["code"] in ("UNAVAILABLE", "INTERNAL", "CANCELLED")
    finally:
        for p in (proc, client):
            if p is not None and p.returncode is None:
                p.kill()
                await p.wait()
