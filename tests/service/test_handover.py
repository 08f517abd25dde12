"""`metasre serve --handover`: a stopped server leaves its sessions to the next one on its store.

Real `metasre serve` processes on one store and one port, stopped with SIGTERM, one after the
other; the agent resumes its seat on the second and finishes the episode it began on the first.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_status import rpc_status

from metasre.agents.client import MetasreClient
from metasre.agents.errors import ClientError
from metasre.agents.retry import RetryPolicy
from metasre.service import ServerConfig
from metasre.simulator import Episode
from metasre.v1 import agent_pb2, agent_pb2_grpc, control_pb2_grpc

from .conftest import PAY, TIMEOUT, AgentClient, create, details, owned_channel, pay_solution
from .serve_process import metasre_serve

FAST_RECONNECT = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 200),
)


async def test_a_handed_over_session_is_resumed_on_the_next_server(store_where: Path | str):
    db = store_where  # either kind of store: a SQLite file, a PostgreSQL database
    steps = pay_solution(seed=2)
    async with metasre_serve("--store", str(db), "--handover") as first:
        port = int(first.address.rpartition(":")[2])
        # No retries: this test looks at the refusal the SDK otherwise waits out by itself
        # (tests/agents/test_retry.py).
        client = MetasreClient(first.address, options=FAST_RECONNECT, retry=RetryPolicy.never())
        handle = await client.create_session(PAY, seed=2, seats=["a"])
        agent = client.agent(handle.id, handle.tokens["a"])
        await agent.join()
        results = [await agent.call(*steps[0])]
        # SIGTERM: the call's stream ends saying where the session went, the process exits 0.
        assert await first.stop() == 0
        with pytest.raises(ClientError) as ended:
            await agent.call("get_alerts")
        assert ended.value.reason == "SERVER_HANDING_OVER"
        assert "resume your seat" in ended.value.message
    handed = [e for e in first.events() if e["event"] == "session_handed_over"]
    assert [e["session_id"] for e in handed] == [handle.id]
    assert not [e for e in first.events() if e["event"] == "session_closed"]

    async with metasre_serve("--store", str(db), "--handover", port=port) as second:
        await agent.join(resume=True)
        for step in steps[1:]:
            results.append(await agent.call(*step))
        grade = await client.get_grade(handle.id)
        await agent.close()
        await client.close()
        assert await second.stop() == 0
    recovered = [e for e in second.events() if e["event"] == "session_recovered"]
    assert [e["session_id"] for e in recovered] == [handle.id]

    # The episode went on where it stopped: the same as playing it in one go.
    straight = Episode.make(PAY, 2)
    for tool, args in steps:
        straight.apply("a", tool, args)
    assert [r.tick for r in results] == list(range(1, len(steps) + 1))
    assert grade["grade"]["total"] == pytest.approx(straight.grade().total)
    assert grade["grade"]["resolved"] is True


async def test_without_handover_a_stop_closes_the_sessions(tmp_path: Path):
    db = tmp_path / "store.db"
    async with metasre_serve("--store", str(db)) as served:
        async with MetasreClient(served.address) as client:
            handle = await client.create_session(PAY, seats=["a"])
        assert await served.stop() == 0
    closed = [e for e in served.events() if e["event"] == "session_closed"]
    assert [e["session_id"] for e in closed] == [handle.id]
    async with metasre_serve("--store", str(db)) as again:
        assert await asyncio.wait_for(again.stop(), 30) == 0
    assert not [e for e in again.events() if e["event"] == "session_recovered"]


def test_handover_needs_a_store():
    with pytest.raises(ValueError, match="needs a store"):
        ServerConfig(handover=True)


PACE = 0.02
"""Seconds between a worker's calls: its episode's 30 steps outlast the load period."""


async def hammer_calls(agent: Any, sid: str, token: str, name: str, out: list[str]) -> None:
    """Unary calls until one fails; the failure's code and reason go to `out`."""
    n = 0
    while True:
        n += 1
        await asyncio.sleep(PACE)
        try:
            await agent.CallTool(
                agent_pb2.CallToolRequest(
                    session_id=sid,
                    token=token,
                    call=agent_pb2.ToolCall(call_id=f"{name}{n}", tool="get_alerts"),
                )
            )
        except grpc.aio.AioRpcError as exc:
            status = rpc_status.from_call(exc)
            reason = details(status)[0].reason if status is not None else ""
            if reason == "EPISODE_OVER":
                return
            out.append(f"{exc.code().name} {reason}".strip())
            return


async def hammer_stream(channel: Any, sid: str, token: str, out: list[str]) -> None:
    """A Connect stream calling as fast as answers come; how it ends goes to `out`."""
    client = AgentClient(channel)
    try:
        await client.join(sid, token)
        while True:
            await asyncio.sleep(PACE)
            reply = await client.result_or_error(client.tool("get_alerts"))
            if reply.WhichOneof("response") == "error":
                reason = details(reply.error)[0].reason
                if reason == "EPISODE_OVER":
                    return
                out.append(f"in-band {reason}")
                return
    except AssertionError:  # the stream ended: its status says how
        code = await client.call.code()
        status = rpc_status.from_call(client.call)  # type: ignore[arg-type]
        reason = details(status)[0].reason if status is not None else ""
        out.append(f"{code.name} {reason}".strip())
    except grpc.aio.AioRpcError as exc:
        status = rpc_status.from_call(exc)
        reason = details(status)[0].reason if status is not None else ""
        out.append(f"{exc.code().name} {reason}".strip())


async def test_every_call_during_a_handover_hears_server_handing_over(tmp_path: Path):
    """Calls and streams racing a --handover SIGTERM: each ends retryably, none as closed,
    missing or internal (before: SESSION_CLOSED, SESSION_NOT_FOUND, INTERNAL)."""
    seen: list[str] = []
    for run in range(3):
        db = tmp_path / f"store{run}.db"
        async with metasre_serve("--store", str(db), "--handover") as served:
            channel = owned_channel(served.address)
            control = control_pb2_grpc.ControlServiceStub(channel)
            agent = agent_pb2_grpc.AgentServiceStub(channel)
            workers = []
            for n in range(4):
                created = await create(control, ("a", "b"))
                sid = created.session.session_id
                workers.append(
                    hammer_calls(agent, sid, created.tokens[0].join_token, f"s{n}", seen)
                )
                workers.append(hammer_stream(channel, sid, created.tokens[1].join_token, seen))
            tasks = [asyncio.create_task(w) for w in workers]
            await asyncio.sleep(0.2)  # a load period, not a wait for state
            assert await served.stop() == 0
            await asyncio.wait_for(asyncio.gather(*tasks), TIMEOUT)
            await channel.close()
    assert seen
    # UNAVAILABLE with no reason: the port was already closed. CANCELLED: gRPC itself cancels
    # a call that arrives while its listener closes (no handler runs; a bare gRPC server does
    # the same to 49 of 50 such calls): both are transport-level, and the SDKs retry them.
    # INTERNAL with no ErrorInfo: grpcio's client reports "Internal error from Core" in place of
    # the server's status when it writes a request into a stream the server has just ended (its
    # aio _write), and the SDK treats that as a lost connection. The server's own INTERNAL
    # always carries ErrorInfo (it would read "INTERNAL INTERNAL" here). Never SESSION_CLOSED,
    # SESSION_NOT_FOUND, or an INTERNAL of the server's.
    allowed = {"UNAVAILABLE SERVER_HANDING_OVER", "UNAVAILABLE", "CANCELLED", "INTERNAL"}
    assert set(seen) <= allowed, seen
    assert "UNAVAILABLE SERVER_HANDING_OVER" in seen
