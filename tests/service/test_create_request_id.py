"""CreateSession's request id (issue 19, finding 6): a retried creation gets the same session.

A SIGKILL during creation left sessions stored but never answered, orphans nobody held tokens
for, and a retrying client made a second one. With `request_id` (scoped to the owner token and
stored with the session), the same id again gets the same session and the same join tokens,
across a restart too; other parameters under the same id are refused, and so is an id without an
owner token of the client's own.
"""

from __future__ import annotations

import asyncio
import secrets
import signal
from pathlib import Path

import grpc
import pytest
from grpc_status import rpc_status

from metasre.service import Limits, ServerConfig, build_server
from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2, control_pb2_grpc

from .conftest import PAY, TIMEOUT, details, owner_channel
from .serve_process import metasre_serve


def request(owner: str, request_id: str, *, seed: int = 0, seats: int = 2):
    return control_pb2.CreateSessionRequest(
        scenario_id=PAY,
        seed=seed,
        seats=[common_pb2.SeatConfig(agent_id=f"a{i}") for i in range(seats)],
        owner_token=owner,
        request_id=request_id,
    )


def tokens(response: control_pb2.CreateSessionResponse) -> dict[str, str]:
    return {t.agent_id: t.join_token for t in response.tokens}


async def joins(channel: grpc.aio.Channel, session_id: str, token: str) -> int:
    """The tick of a call made with the seat `token` opens (proves the token works)."""
    stub = agent_pb2_grpc.AgentServiceStub(channel)
    reply = await stub.CallTool(
        agent_pb2.CallToolRequest(
            session_id=session_id,
            token=token,
            call=agent_pb2.ToolCall(call_id=secrets.token_hex(4), tool="get_alerts"),
        ),
        timeout=TIMEOUT,
    )
    return reply.result.tick


async def test_the_same_request_id_gets_the_same_session_and_tokens_and_only_its_owner() -> None:
    server = await build_server(ServerConfig(port=0, limits=Limits(max_sessions=3)))
    await server.start()
    owner, other = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    try:
        async with owner_channel(server.address, owner) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            first = await control.CreateSession(request(owner, "job-1"))
            again = await control.CreateSession(request(owner, "job-1"))
            assert again.session.session_id == first.session.session_id
            assert tokens(again) == tokens(first) and again.owner_token == owner
            sid = first.session.session_id
            assert await joins(channel, sid, tokens(again)["a1"]) == 1

            # At once, many times: one session.
            many = await asyncio.gather(
                *(control.CreateSession(request(owner, "job-2")) for _ in range(10))
            )
            assert len({m.session.session_id for m in many}) == 1
            assert len({tuple(sorted(tokens(m).items())) for m in many}) == 1

            # The id is the owner's: another owner's same id is another session.
            theirs = await control.CreateSession(request(other, "job-1"))
            assert theirs.session.session_id not in (sid, many[0].session.session_id)
            # The server is now full; a retry of an existing id is still answered.
            assert (await control.CreateSession(request(owner, "job-1"))).session.session_id == sid

            # Other parameters under the same id: refused, naming the session it made.
            with pytest.raises(grpc.aio.AioRpcError) as reused:
                await control.CreateSession(request(owner, "job-1", seed=7))
            assert reused.value.code() == grpc.StatusCode.ALREADY_EXISTS
            info, _ = details(rpc_status.from_call(reused.value))
            assert (info.reason, info.metadata["session_id"]) == ("REQUEST_ID_REUSED", sid)
            assert "with other parameters" in (reused.value.details() or "")

            # Once closed, the id does not make a new session behind the caller's back.
            await control.CloseSession(control_pb2.CloseSessionRequest(session_id=sid))
            with pytest.raises(grpc.aio.AioRpcError) as closed:
                await control.CreateSession(request(owner, "job-1"))
            assert closed.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert details(rpc_status.from_call(closed.value))[0].reason == "SESSION_CLOSED"
            assert "send a new request_id" in (closed.value.details() or "")

        # An id needs an owner token of the caller's own, and a sane length.
        async with grpc.aio.insecure_channel(server.address) as bare:
            control = control_pb2_grpc.ControlServiceStub(bare)
            for bad, field in (
                (request("", "job-3"), "owner_token"),
                (request(owner, "x" * 129), "request_id"),
            ):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await control.CreateSession(bad)
                assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                _, violations = details(rpc_status.from_call(refused.value))
                assert [f for f, _ in violations] == [field]
    finally:
        await server.stop(0.5)


@pytest.mark.parametrize("answered_first", [1, 12, 23], ids=lambda n: f"kill-after-{n}")
async def test_a_request_id_survives_a_sigkill_and_restart(
    tmp_path: Path, answered_first: int
) -> None:
    """Creations in flight when the server is SIGKILLed: retried with their ids on the restarted
    server, each gets the session the first attempt stored if it did, else a new one, never two,
    and an answered one's tokens are the same."""
    db, owner = tmp_path / "store.db", secrets.token_urlsafe(24)
    ids = [f"create-{i}" for i in range(24)]
    async with metasre_serve("--store", str(db)) as served:
        port = int(served.address.rpartition(":")[2])
        async with owner_channel(served.address, owner) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            calls = [
                asyncio.ensure_future(control.CreateSession(request(owner, i, seed=n)))
                for n, i in enumerate(ids)
            ]
            for done in asyncio.as_completed(calls):
                await done
                if sum(c.done() for c in calls) >= answered_first:
                    break
            served.proc.send_signal(signal.SIGKILL)  # the others still in flight
            await served.proc.wait()
            outcomes = await asyncio.gather(*calls, return_exceptions=True)
    answered = {
        i: o for i, o in zip(ids, outcomes, strict=True) if not isinstance(o, BaseException)
    }
    assert answered, "no creation was answered before the kill"

    async with metasre_serve("--store", str(db), port=port) as again:
        async with owner_channel(again.address, owner) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            retried = {
                i: await control.CreateSession(request(owner, i, seed=n)) for n, i in enumerate(ids)
            }
            for i, first in answered.items():
                assert retried[i].session.session_id == first.session.session_id
                assert tokens(retried[i]) == tokens(first)
            listed = await control.ListSessions(control_pb2.ListSessionsRequest())
            # One session per id: no orphan of a lost answer, no second session of a retry.
            assert sorted(s.session_id for s in listed.sessions) == sorted(
                r.session.session_id for r in retried.values()
            )
            some = retried[ids[-1]]
            assert await joins(channel, some.session.session_id, tokens(some)["a0"]) == 1
        assert await again.stop() == 0
    recovered = [e for e in again.events() if e["event"] == "session_recovered"]
    print(f"{len(answered)} of {len(ids)} answered before the kill, {len(recovered)} stored")
    assert len(recovered) >= len(answered)
