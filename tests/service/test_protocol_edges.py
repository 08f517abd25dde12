"""The protocol's edges a client from the protos alone hit (issue 28): races, refusals, stores.

Each test goes through a real server on 127.0.0.1 with real grpc.aio channels.
"""

from __future__ import annotations

import ast
import asyncio
import os
import re
import secrets
from pathlib import Path

import grpc
import pytest
from grpc_status import rpc_status

from metasre.agents import ClientError, MetasreClient, RetryPolicy
from metasre.service import Limits, ServerConfig, build_server
from metasre.service.core.errors import ServiceError
from metasre.service.server import MetasreServer
from metasre.service.wire.status import DOMAIN, ERROR_TABLE
from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2, control_pb2_grpc

from .conftest import (
    PAY,
    TIMEOUT,
    AgentClient,
    create,
    details,
    owned_channel,
    owner_channel,
    pay_solution,
    struct,
)
from .serve_process import metasre_serve


def create_request(owner: str, request_id: str) -> control_pb2.CreateSessionRequest:
    return control_pb2.CreateSessionRequest(
        scenario_id=PAY,
        seed=1,
        seats=[common_pb2.SeatConfig(agent_id="a"), common_pb2.SeatConfig(agent_id="b")],
        owner_token=owner,
        request_id=request_id,
    )


async def test_concurrent_retries_of_one_request_id_on_a_stored_server_get_one_session(
    tmp_path: Path,
) -> None:
    """Item 1: with a store, the request id's lookup awaits the store; retries racing through
    it each made a session (a unique-constraint error, then a KeyError on the pending map, and
    a waiter left hanging). All of them, sent at once, must get the one session."""
    server = await build_server(ServerConfig(port=0, store_path=tmp_path / "store.db"))
    await server.start()
    owner = secrets.token_urlsafe(24)
    try:
        async with owner_channel(server.address, owner) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            for round_no in range(3):
                calls = [
                    control.CreateSession(create_request(owner, f"job-{round_no}"), timeout=TIMEOUT)
                    for _ in range(12)
                ]
                answers = await asyncio.gather(*calls, return_exceptions=True)
                failures = [a for a in answers if isinstance(a, BaseException)]
                assert not failures, [
                    (f.code(), f.details()) if isinstance(f, grpc.aio.AioRpcError) else repr(f)
                    for f in failures
                ]
                ids = {a.session.session_id for a in answers if not isinstance(a, BaseException)}
                assert len(ids) == 1, ids
            listed = await control.ListSessions(control_pb2.ListSessionsRequest())
            assert len(listed.sessions) == 3
    finally:
        await server.stop(0.5)


LIMIT = 64 * 1024


async def test_a_call_refused_as_too_large_is_answered_under_its_call_id() -> None:
    """Item 2: the refusal of an oversized call named no call_id, so a client waiting for its
    call's answer (the SDK) waited forever. The id is read from the refused bytes; a raw stream
    and the SDK both get the refusal of that call at once, and the stream goes on."""
    limits = Limits(max_message_bytes=LIMIT)
    server = await build_server(ServerConfig(port=0, limits=limits, grace_seconds=0.5))
    await server.start()
    try:
        async with owned_channel(server.address) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            created = await create(control, ("a", "b"))
            sid = created.session.session_id
            raw = AgentClient(channel)
            await raw.join(sid, created.tokens[0].join_token)
            for call_id in ("big-1", "ünï-2", "x" * 128):
                raw.send(
                    agent_pb2.ConnectRequest(
                        call=agent_pb2.ToolCall(
                            call_id=call_id,
                            tool="read_logs",
                            args=struct({"service": "s" * (2 * LIMIT)}),
                        )
                    )
                )
                refused = await raw.expect("error")
                assert refused.call_id == call_id
                assert details(refused.error)[0].reason == "MESSAGE_TOO_LARGE"
            assert (await raw.result_or_error(raw.tool("get_alerts"))).result.tick == 1
            raw.close()

        async with MetasreClient(server.address, retry=RetryPolicy.never()) as client:
            session = await client.create_session(PAY, seed=0, seats=["me"])
            async with client.agent(session.id, session.tokens["me"]) as agent:
                with pytest.raises(ClientError) as too_large:
                    await asyncio.wait_for(
                        agent.call("read_logs", {"service": "s" * (2 * LIMIT)}), TIMEOUT
                    )
                assert too_large.value.reason == "MESSAGE_TOO_LARGE"
                assert too_large.value.call_id
                alerts = await asyncio.wait_for(agent.call("get_alerts"), TIMEOUT)
                assert alerts.ok
    finally:
        await server.stop(0.5)


STORE_DAMAGE = {
    "database removed": lambda db: db.unlink(),
    "database truncated": lambda db: os.truncate(db, 0),
    "WAL removed": lambda db: Path(f"{db}-wal").unlink(),
}


@pytest.mark.parametrize("damage", list(STORE_DAMAGE))
async def test_a_stored_trajectory_whose_store_is_damaged_is_store_unavailable_for_anyone(
    tmp_path: Path, damage: str
) -> None:
    """Item 3: GetTrajectory of a closed session (only its store holds it) answered INTERNAL
    once the store file was removed or cut: SQLite's error was not mapped. The owner and a
    stranger both get UNAVAILABLE / STORE_UNAVAILABLE naming the store, never INTERNAL."""
    db = tmp_path / "store.db"
    server = await build_server(ServerConfig(port=0, store_path=db, grace_seconds=0.5))
    await server.start()
    try:
        async with owned_channel(server.address) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            created = await create(control, ("a",))
            sid = created.session.session_id
            await control.CloseSession(control_pb2.CloseSessionRequest(session_id=sid))
            kept = await control.GetTrajectory(control_pb2.GetTrajectoryRequest(session_id=sid))
            assert kept.events
            STORE_DAMAGE[damage](db)
            async with owner_channel(server.address, secrets.token_urlsafe(24)) as other:
                for stub in (control, control_pb2_grpc.ControlServiceStub(other)):
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await stub.GetTrajectory(
                            control_pb2.GetTrajectoryRequest(session_id=sid), timeout=TIMEOUT
                        )
                    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE, (
                        refused.value.details()
                    )
                    status = rpc_status.from_call(refused.value)
                    assert status is not None
                    assert details(status)[0].reason == "STORE_UNAVAILABLE"
                    assert str(db) in (refused.value.details() or "")
    finally:
        await server.stop(0.5)


async def test_a_store_whose_header_is_overwritten_says_exactly_what_it_kept(
    tmp_path: Path,
) -> None:
    """Item 3: with the database's header overwritten in place, the refused call was in fact
    written, and a restart on the store brought the session back, while the refusal said that
    nothing after the last acknowledged call was kept and that the session could not come back.
    Now it says the call was written and comes back with the session; sent again under its
    call_id after the restart, the call gets that result and is not applied twice."""
    db, owner = tmp_path / "store.db", secrets.token_urlsafe(24)

    async def call(stub: agent_pb2_grpc.AgentServiceStub, sid: str, token: str, i: int) -> int:
        reply = await stub.CallTool(
            agent_pb2.CallToolRequest(
                session_id=sid,
                token=token,
                call=agent_pb2.ToolCall(call_id=f"c{i}", tool="get_alerts"),
            ),
            timeout=TIMEOUT,
        )
        return reply.result.tick

    server = await build_server(ServerConfig(port=0, store_path=db, grace_seconds=0.5))
    await server.start()
    try:
        async with owner_channel(server.address, owner) as channel:
            created = await create(control_pb2_grpc.ControlServiceStub(channel), ("a",))
            sid, token = created.session.session_id, created.tokens[0].join_token
            stub = agent_pb2_grpc.AgentServiceStub(channel)
            assert [await call(stub, sid, token, i) for i in range(3)] == [1, 2, 3]
            with db.open("r+b") as file:  # the same file, the same size: only its header
                file.write(b"\0" * 16)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call(stub, sid, token, 3)
            said = refused.value.details() or ""
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
            assert "header overwritten" in said and "this call was written" in said, said
            assert "nothing after" not in said and "cannot come back" not in said, said
            assert "brings the session back as of this call" in said, said
    finally:
        await server.stop(0.5)

    again = await build_server(ServerConfig(port=0, store_path=db, grace_seconds=0.5))
    await again.start()
    try:
        async with owner_channel(again.address, owner) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            listed = await control.ListSessions(control_pb2.ListSessionsRequest())
            assert [(s.session_id, s.tick) for s in listed.sessions] == [(sid, 4)]
            stub = agent_pb2_grpc.AgentServiceStub(channel)
            assert await call(stub, sid, token, 3) == 4  # its result, not a second application
            assert await call(stub, sid, token, 4) == 5
    finally:
        await again.stop(0.5)


@pytest.mark.parametrize(
    ("looks", "attribution"),
    [
        (3, common_pb2.REWARD_ATTRIBUTION_SHARED),
        (7, common_pb2.REWARD_ATTRIBUTION_MIXED),
        (11, common_pb2.REWARD_ATTRIBUTION_INDIVIDUAL),
    ],
    ids=["shared", "mixed", "individual"],
)
async def test_a_seat_s_reward_total_reads_the_same_everywhere(
    looks: int, attribution: int
) -> None:
    """Item 4: EpisodeEnded.agent_rewards was rounded to 9 places and GetGrade and
    Seat.reward_total were not (1.34 against 1.3399999999999999). One rule everywhere: the
    three agree exactly, and each is the sum of the seat's rewards rounded as a reward is."""
    server = await build_server(ServerConfig(port=0, grace_seconds=0.5))
    await server.start()
    try:
        async with owned_channel(server.address) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            created = await create(
                control, ("a", "b", "c"), attribution=attribution, team_spirit=0.3
            )
            sid = created.session.session_id
            agents = [AgentClient(channel) for _ in created.tokens]
            for agent, token in zip(agents, created.tokens, strict=True):
                await agent.join(sid, token.join_token)
            for i in range(looks):
                agent = agents[i % len(agents)]
                await agent.result_or_error(agent.tool("get_alerts"))
            for tool, args in pay_solution():
                reply = await agents[0].result_or_error(agents[0].tool(tool, args))
                assert reply.WhichOneof("response") == "result", reply
            ended = (await agents[0].until_end()).episode_end.agent_rewards
            graded = (
                await control.GetGrade(control_pb2.GetGradeRequest(session_id=sid))
            ).agent_rewards
            seats = (
                await control.GetSession(control_pb2.GetSessionRequest(session_id=sid))
            ).session.seats
            assert dict(graded) == dict(ended)
            assert {s.agent_id: s.reward_total for s in seats} == dict(ended)
            for value in ended.values():
                assert value == round(value, 9)
            for agent in agents:
                agent.close()
    finally:
        await server.stop(0.5)


async def test_on_a_plain_sigterm_a_seat_s_stream_ends_server_draining() -> None:
    """Item 6: a seat's stream ended OK on SIGTERM, where agent.proto says UNAVAILABLE /
    SERVER_DRAINING (the server stops and closes the session). A real `metasre serve`, a real
    SIGTERM; the Python SDK's agent hears the reason too."""
    async with metasre_serve() as served, owned_channel(served.address) as channel:
        control = control_pb2_grpc.ControlServiceStub(channel)
        created = await create(control, ("a", "b"))
        sid = created.session.session_id
        raw = AgentClient(channel)
        await raw.join(sid, created.tokens[0].join_token)
        await raw.result_or_error(raw.tool("get_alerts"))
        async with MetasreClient(served.address, retry=RetryPolicy.never()) as client:
            sdk = client.agent(sid, created.tokens[1].join_token)
            await sdk.join()
            assert await served.stop() == 0
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                while True:
                    await raw.receive()
            assert ended.value.code() == grpc.StatusCode.UNAVAILABLE
            status = rpc_status.from_call(ended.value)
            assert status is not None and details(status)[0].reason == "SERVER_DRAINING"
            assert f"closed session {sid}" in (ended.value.details() or "")
            with pytest.raises(ClientError) as lost:
                await asyncio.wait_for(sdk.call("get_alerts"), TIMEOUT)
            assert lost.value.reason == "SERVER_DRAINING"


async def test_a_call_id_sent_again_with_another_call_is_refused_naming_the_first(
    server: MetasreServer,
) -> None:
    """Item 7: a repeated call_id returned the earlier result even for another tool, which no
    proto said. The same call again still gets its result (never applied twice); the same id
    with another tool, other arguments or a bad call is refused ALREADY_EXISTS /
    CALL_ID_REUSED, as a reused request_id is, naming the call it was given to."""
    async with owned_channel(server.address) as channel:
        created = await create(control_pb2_grpc.ControlServiceStub(channel), ("a",))
        sid, token = created.session.session_id, created.tokens[0].join_token
        stub = agent_pb2_grpc.AgentServiceStub(channel)

        async def call(tool: str, args: dict[str, object]) -> agent_pb2.CallToolResponse:
            return await stub.CallTool(
                agent_pb2.CallToolRequest(
                    session_id=sid,
                    token=token,
                    call=agent_pb2.ToolCall(call_id="once", tool=tool, args=struct(args)),
                ),
                timeout=TIMEOUT,
            )

        logs = {"service": "payment-service", "level": "ERROR"}
        first = await call("read_logs", logs)
        assert first.result.tick == 1
        # The same call, with its defaults spelled out: the same call, its result again.
        again = await call("read_logs", {**logs, "lines": 40})
        assert again.result.tick == 1 and again.result.text == first.result.text
        for tool, args in (
            ("get_alerts", {}),
            ("read_logs", {"service": "payment-service", "level": "WARN"}),
            ("read_logs", {"service": "payment-service", "nonsense": 1}),
            ("no_such_tool", {}),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call(tool, args)
            assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS, (tool, args)
            info, violations = details(rpc_status.from_call(refused.value))
            assert info.reason == "CALL_ID_REUSED"
            assert info.metadata["tool"] == "read_logs" and info.metadata["tick"] == "1"
            assert [f for f, _ in violations] == ["call.call_id"]
        # Nothing of the refused calls was applied.
        session = await control_pb2_grpc.ControlServiceStub(channel).GetSession(
            control_pb2.GetSessionRequest(session_id=sid)
        )
        assert session.session.tick == 1


async def test_resume_after_sequence_zero_replays_the_episode_from_its_start(
    server: MetasreServer,
) -> None:
    """Item 7: ResumeSeat.after_sequence = 0 replays the whole current episode, as a join does,
    where the comment said it replays nothing; the comment now says what it does."""
    async with owned_channel(server.address) as channel:
        created = await create(control_pb2_grpc.ControlServiceStub(channel), ("a",))
        sid = created.session.session_id
        first = AgentClient(channel)
        joined = await first.join(sid, created.tokens[0].join_token)
        for _ in range(2):
            await first.result_or_error(first.tool("get_alerts"))
        first.close()
        again = AgentClient(channel)
        again.send(
            agent_pb2.ConnectRequest(
                resume=agent_pb2.ResumeSeat(
                    session_id=sid, resume_token=joined.resume_token, after_sequence=0
                )
            )
        )
        await again.expect("joined")
        starts = await again.expect("episode_start")
        results = [await again.expect("result") for _ in range(2)]
        assert starts.sequence < results[0].sequence
        assert [r.result.tick for r in results] == [1, 2]
        again.close()
    proto = (Path(__file__).parents[2] / "protos/metasre/v1/agent.proto").read_text()
    assert "0 replays the current\n  // episode from its start" in proto


def test_the_protos_list_every_error_reason_with_its_code() -> None:
    """Item 7: a client written from the protos needed the server's code for the ErrorInfo
    reasons, domain and metadata keys. common.proto lists them; this keeps the list and the
    server's one table (status.ERROR_TABLE) the same, both ways."""
    text = (Path(__file__).parents[2] / "protos/metasre/v1/common.proto").read_text()
    header = text.split('syntax = "proto3";', 1)[0]
    assert f'domain "{DOMAIN}"' in header
    listed = set()
    for reason, codes in re.findall(r"//   ([A-Z_]+) \(([A-Z_]+)[;)]", header):
        listed.add((reason, codes))
    listed |= {
        (reason, code)
        for reason, code in re.findall(r"//   ([A-Z_]+) \(.*?\), or \(([A-Z_]+)\)", header)
    }
    served = {(row.reason, row.code.name) for row in ERROR_TABLE.values()}
    served.add(("INTERNAL", "INTERNAL"))
    assert listed == served, (
        f"missing from common.proto: {sorted(served - listed)}; "
        f"not served: {sorted(listed - served)}"
    )


def _listed_metadata() -> dict[str, set[str]]:
    """common.proto's header: each reason and the ErrorInfo.metadata keys it lists."""
    text = (Path(__file__).parents[2] / "protos/metasre/v1/common.proto").read_text()
    header = text.split('syntax = "proto3";', 1)[0].replace("\n//     ", " ")
    listed: dict[str, set[str]] = {}
    for reason, inside in re.findall(r"//   ([A-Z_]+) \(([^)]*)\)", header):
        keys = inside.split(";")[1] if ";" in inside else ""  # then "; with RetryInfo"
        listed.setdefault(reason, set()).update(
            k.strip()
            for k in keys.replace(" when a request_id made it", "").split(",")
            if k.strip()
        )
    return listed


def _emitted_metadata() -> dict[str, set[str]]:
    """Every metadata key the server's code puts on a refusal, by reason: each ServiceError
    raised with a dict literal of metadata (the 3rd argument or metadata=), and the tool
    errors' details (status._details) and INTERNAL's incident."""
    reason_of = {
        cls.__name__: row.reason
        for cls, row in ERROR_TABLE.items()
        if issubclass(cls, ServiceError)  # the tool errors' metadata comes from _details
    }
    emitted: dict[str, set[str]] = {
        "UNKNOWN_TOOL": {"tool", "choices"},
        "INVALID_ARGUMENTS": {"tool"},
        "INTERNAL": {"incident"},
    }
    root = Path(__file__).parents[2] / "service"
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name not in reason_of:
                continue
            given = [k.value for k in node.keywords if k.arg == "metadata"]
            given += node.args[2:3]
            for value in given:
                assert isinstance(value, ast.Dict), f"{path.name}:{node.lineno}: a dict literal"
                keys = {k.value for k in value.keys if isinstance(k, ast.Constant)}
                emitted.setdefault(reason_of[name], set()).update(keys)
    return emitted


def test_the_protos_list_every_metadata_key_each_reason_sets() -> None:
    """Item 7: ErrorInfo.metadata's keys were found by reading the server. Every key the
    server's code sets on a reason is listed beside that reason in common.proto, and none
    that it never sets."""
    listed, emitted = _listed_metadata(), _emitted_metadata()
    assert emitted.get("SLOW_READER") and emitted.get("CALL_ID_REUSED")  # the scan finds them
    for reason in sorted(set(listed) | set(emitted)):
        assert emitted.get(reason, set()) == listed.get(reason, set()), (
            f"{reason}: the server sets {sorted(emitted.get(reason, ()))}, common.proto lists "
            f"{sorted(listed.get(reason, ()))}"
        )


async def test_every_seat_hears_whose_turn_it_is(server: MetasreServer) -> None:
    """Item 7: under ROUND_ROBIN, TurnGranted went only to the seat that got the turn, so a
    teammate could not tell whose turn it was without polling. Every seat hears it now."""
    async with owned_channel(server.address) as channel:
        control = control_pb2_grpc.ControlServiceStub(channel)
        created = await create(control, ("a", "b"), policy=common_pb2.TURN_POLICY_ROUND_ROBIN)
        sid = created.session.session_id
        a, b = AgentClient(channel), AgentClient(channel)
        await a.join(sid, created.tokens[0].join_token)
        await b.join(sid, created.tokens[1].join_token)
        await a.result_or_error(a.tool("get_alerts"))
        await b.expect("turn", lambda m: m.turn.agent_id == "b")
        await a.expect("turn", lambda m: m.turn.agent_id == "b")  # it passed to b
        await b.result_or_error(b.tool("get_alerts"))
        back = await b.expect("turn", lambda m: m.turn.agent_id == "a")  # and back to a
        assert back.turn.tick == 2
        # Both heard the same turns, in the same order.
        heard = [
            [
                (m.turn.tick, m.turn.agent_id)
                for m in c.received
                if m.WhichOneof("response") == "turn"
            ]
            for c in (a, b)
        ]
        short, long = sorted(heard, key=len)
        assert long[: len(short)] == short and len(short) >= 2, heard
        a.close()
        b.close()


async def test_a_failed_join_leaves_the_stream_open_for_another(server: MetasreServer) -> None:
    """Item 7: what the join's comment now says: a join that fails is answered in-band, and the
    same stream then takes a join with the right token."""
    async with owned_channel(server.address) as channel:
        created = await create(control_pb2_grpc.ControlServiceStub(channel), ("a",))
        sid = created.session.session_id
        client = AgentClient(channel)
        client.send(
            agent_pb2.ConnectRequest(
                join=agent_pb2.JoinSeat(session_id=sid, join_token="not-the-token-" + "x" * 20)
            )
        )
        refused = await client.expect("error")
        assert details(refused.error)[0].reason in ("TOKEN_INVALID", "NOT_SESSION_OWNER")
        assert (await client.join(sid, created.tokens[0].join_token)).agent_id == "a"
        assert (await client.result_or_error(client.tool("get_alerts"))).result.tick == 1
        client.close()
    proto = (Path(__file__).parents[2] / "protos/metasre/v1/agent.proto").read_text()
    assert "A join that fails is answered in-band and\n    // the stream stays open" in proto
