"""The server records every session and acknowledged call in its trajectory store, and exports it.

Real servers with a real SQLite file in tmp_path: in-process through the `config` fixture below
(conftest's `server`, `channel` and `control` pick it up), and a `metasre serve` subprocess for
SIGKILL.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_status import rpc_status

from metasre.service import Limits, ServerConfig
from metasre.service.core.attribution import Attribution
from metasre.service.core.session import SeatSpec, SessionSpec, TurnPolicy
from metasre.service.store.codec import spec_from_config
from metasre.service.store.contract import Store
from metasre.service.store.export import calls_of
from metasre.service.store.opening import open_store
from metasre.service.store.sqlite import TrajectoryStore
from metasre.simulator import Episode, resolve
from metasre.simulator.replay import replay
from metasre.v1 import (
    agent_pb2,
    agent_pb2_grpc,
    common_pb2,
    control_pb2,
    control_pb2_grpc,
    watch_pb2,
    watch_pb2_grpc,
)

from .conftest import AD, PAY, TIMEOUT, AgentClient, create, details, pay_solution, struct
from .serve_process import metasre_serve

UNAVAILABLE = grpc.StatusCode.UNAVAILABLE
MIGRATION = "meta-sre/migration-cascade-v3"
OOM = "meta-sre/user-service-oom-v2"
FULL_DISK = (
    "CREATE TRIGGER full BEFORE INSERT ON events BEGIN "
    "SELECT RAISE(ABORT, 'database or disk is full'); END"
)
"""Stands in for a full disk: every insert into events now fails inside SQLite."""


@pytest.fixture
def config(request: pytest.FixtureRequest, tmp_path: Path) -> ServerConfig:
    """A server on a SQLite store; parametrised indirectly, on either kind ("postgres")."""
    url = None
    if getattr(request, "param", "sqlite") == "postgres":
        url = str(request.getfixturevalue("postgres_cluster").new_database())
    return ServerConfig(
        port=0,
        limits=Limits(turn_timeout_seconds=10.0),
        grace_seconds=1.0,
        store_path=tmp_path / "trajectories.db" if url is None else None,
        store_url=url,
    )


def stub(channel: grpc.aio.Channel) -> agent_pb2_grpc.AgentServiceStub:
    return agent_pb2_grpc.AgentServiceStub(channel)


async def call_tool(
    channel: grpc.aio.Channel,
    session_id: str,
    token: str,
    call_id: str,
    tool: str,
    args: dict[str, Any] | None = None,
) -> agent_pb2.ToolResult:
    reply = await stub(channel).CallTool(
        agent_pb2.CallToolRequest(
            session_id=session_id,
            token=token,
            call=agent_pb2.ToolCall(call_id=call_id, tool=tool, args=struct(args)),
        ),
        timeout=TIMEOUT,
    )
    return reply.result


def applied_ids(store: Store, session_id: str) -> list[str]:
    return [e.payload["call_id"] for e in store.events(session_id) if e.kind == "applied"]


async def test_every_acknowledged_call_and_the_session_config_are_stored(server, channel, control):
    store = server.store
    assert store is not None
    created = await create(
        control,
        ("a", "b"),
        policy=common_pb2.TURN_POLICY_FREE_FOR_ALL,
        attribution=common_pb2.REWARD_ATTRIBUTION_MIXED,
        team_spirit=0.25,
        turn_timeout=7.0,
        allowed={"b": ["read_logs", "send_message", "get_alerts"]},
    )
    sid = created.session.session_id
    # CreateSession answered: the session and its first event are already committed.
    (row,) = store.sessions()
    assert row.session_id == sid and row.closed_at is None
    assert spec_from_config(row.config) == SessionSpec(
        PAY,
        0,
        (
            SeatSpec("a", "a"),
            SeatSpec("b", "b", frozenset({"read_logs", "send_message", "get_alerts"})),
        ),
        TurnPolicy.FREE_FOR_ALL,
        Attribution.MIXED,
        0.25,
        7.0,
    )
    assert [e.kind for e in store.events(sid)] == ["started"]

    a = AgentClient(channel)
    await a.join(sid, created.tokens[0].join_token)
    b_token = created.tokens[1].join_token
    acked: list[str] = []
    # b calls with the unary CallTool: answered means stored.
    result = await call_tool(
        channel, sid, b_token, "b-1", "read_logs", {"service": "payment-service"}
    )
    assert applied_ids(store, sid) == ["b-1"]
    stored = next(e for e in store.events(sid) if e.kind == "applied")
    assert stored.payload["text"] == result.text and stored.payload["ok"] is True
    assert stored.payload["args"]["service"] == "payment-service"
    acked.append("b-1")
    await call_tool(
        channel, sid, b_token, "b-2", "send_message", {"text": "payment 502s", "to": ["a"]}
    )
    acked.append("b-2")
    # a calls over its Connect stream: a result means stored.
    for tool, args in pay_solution():
        call_id = a.tool(tool, args)
        reply = await a.result_or_error(call_id)
        assert reply.WhichOneof("response") == "result", reply
        acked.append(call_id)
        assert applied_ids(store, sid) == acked
    end = await a.until_end()

    events = store.events(sid)
    kinds = [e.kind for e in events]
    assert kinds.count("applied") == len(acked) == 4
    assert {"started", "applied", "reward", "message", "ended"} == set(kinds)
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    ended = events[-1].payload
    assert ended["grade"]["total"] == pytest.approx(end.episode_end.grade.total)
    assert ended["agent_rewards"] == pytest.approx(dict(end.episode_end.agent_rewards))
    assert {c["name"] for c in ended["grade"]["components"]} == {
        c.name for c in end.episode_end.grade.components
    }
    message = next(e for e in events if e.kind == "message")
    assert message.payload == {"tick": 2, "sender": "b", "to": ["a"], "text": "payment 502s"}
    # The store holds exactly what the server reports as the trajectory, in the same order.
    trajectory = await control.GetTrajectory(control_pb2.GetTrajectoryRequest(session_id=sid))
    assert [(e.sequence, e.WhichOneof("event")) for e in trajectory.events] == [
        (e.sequence, e.kind) for e in events
    ]

    a.close()
    await control.CloseSession(control_pb2.CloseSessionRequest(session_id=sid))
    (row,) = store.sessions()
    assert row.closed_at is not None


async def test_concurrent_sessions_share_commits(server, channel, control):
    store = server.store
    assert store is not None
    sessions = [await create(control, ("a",), scenario=AD) for _ in range(12)]
    per_session = 8
    before = store.commits

    async def play(created: control_pb2.CreateSessionResponse) -> None:
        sid, token = created.session.session_id, created.tokens[0].join_token
        for i in range(per_session):
            await call_tool(channel, sid, token, f"c{i}", "get_alerts")

    await asyncio.gather(*(play(c) for c in sessions))
    calls = len(sessions) * per_session
    assert sum(len(applied_ids(store, c.session.session_id)) for c in sessions) == calls
    # Every call was committed before it was answered, yet far fewer commits than calls.
    assert store.commits - before < calls


async def test_a_store_that_cannot_write_fails_the_call_and_closes_the_session(
    server, channel, control
):
    store = server.store
    assert store is not None
    created = await create(control, ("a", "b"))
    sid = created.session.session_id
    a_token = created.tokens[0].join_token
    b = AgentClient(channel)
    await b.join(sid, created.tokens[1].join_token)
    watch = watch_pb2_grpc.WatchServiceStub(channel).WatchSession(
        watch_pb2.WatchSessionRequest(session_id=sid)
    )
    await call_tool(channel, sid, a_token, "a-1", "get_alerts")
    await b.expect("applied", lambda m: m.applied.call_id == "a-1")
    stored = [(e.sequence, e.kind) for e in store.events(sid)]

    await store.write([(FULL_DISK, ())])
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call_tool(channel, sid, a_token, "a-2", "read_logs", {"service": "payment-service"})
    assert err.value.code() == UNAVAILABLE
    status = rpc_status.from_call(err.value)
    assert status is not None and details(status)[0].reason == "STORE_UNAVAILABLE"
    message = err.value.details() or ""
    assert "disk is full" in message and sid in message and "create a new session" in message

    # Nothing of the unacknowledged call reached anyone: b's stream and the watcher end with
    # the same status, having heard nothing after a-1; the store holds what it held.
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        while True:
            await b.receive()
    assert ended.value.code() == UNAVAILABLE
    assert not [m for m in b.received if m.WhichOneof("response") == "applied"][1:]
    watched = []
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        while True:
            watched.append((await asyncio.wait_for(watch.read(), TIMEOUT)).event)
    assert ended.value.code() == UNAVAILABLE
    assert [(e.sequence, e.WhichOneof("event")) for e in watched] == stored
    assert [(e.sequence, e.kind) for e in store.events(sid)] == stored

    # The session is gone (it would have diverged from its stored trajectory).
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call_tool(channel, sid, a_token, "a-3", "get_alerts")
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert (await control.ListSessions(control_pb2.ListSessionsRequest())).sessions == []
    # A new session cannot be stored either, so it is not created.
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await create(control, ("a",))
    assert err.value.code() == UNAVAILABLE
    assert "not created" in (err.value.details() or "")
    assert (await control.ListSessions(control_pb2.ListSessionsRequest())).sessions == []


async def test_over_connect_the_unrecorded_call_is_refused_in_band_then_the_stream_ends(
    server, channel, control
):
    store = server.store
    assert store is not None
    created = await create(control, ("a",))
    a = AgentClient(channel)
    await a.join(created.session.session_id, created.tokens[0].join_token)
    assert (await a.result_or_error(a.tool("get_alerts"))).result.tick == 1
    await store.write([(FULL_DISK, ())])
    refused = await a.result_or_error(a.tool("read_logs", {"service": "payment-service"}))
    assert refused.WhichOneof("response") == "error"
    assert refused.error.code == UNAVAILABLE.value[0]
    assert details(refused.error)[0].reason == "STORE_UNAVAILABLE"
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        while True:
            await a.receive()
    assert ended.value.code() == UNAVAILABLE
    assert [m.result.tick for m in a.received if m.WhichOneof("response") == "result"] == [1]


async def test_every_acknowledged_call_survives_sigkill_of_the_server(store_where):
    db = store_where
    acked: set[tuple[str, str]] = set()
    enough = asyncio.Event()
    async with (
        metasre_serve("--store", str(db)) as served,
        grpc.aio.insecure_channel(served.address) as channel,
    ):
        control = control_pb2_grpc.ControlServiceStub(channel)
        # 8 sessions of 40 steps each: room for far more calls than the kill lets happen.
        sessions = [await create(control, ("a", "b"), scenario=MIGRATION) for _ in range(8)]

        async def unary(sid: str, token: str, agent: str) -> None:
            for i in range(1000):
                call_id = f"{agent}-{i}"
                await call_tool(channel, sid, token, call_id, "get_alerts")
                acked.add((sid, call_id))
                if len(acked) >= 120:
                    enough.set()

        async def streamed(sid: str, token: str) -> None:
            client = AgentClient(channel)
            await client.join(sid, token)
            for _ in range(1000):
                call_id = client.tool("get_alerts")
                reply = await client.result_or_error(call_id)
                assert reply.WhichOneof("response") == "result", reply
                acked.add((sid, call_id))
                if len(acked) >= 120:
                    enough.set()

        agents = []
        for created in sessions:
            sid = created.session.session_id
            agents.append(asyncio.create_task(unary(sid, created.tokens[0].join_token, "a")))
            agents.append(asyncio.create_task(streamed(sid, created.tokens[1].join_token)))
        await asyncio.wait_for(enough.wait(), 60)
        # Mid-session, calls in flight from 16 agents: no drain, no flush, no goodbye.
        served.proc.send_signal(signal.SIGKILL)
        await asyncio.wait_for(served.proc.wait(), 30)
        outcomes = await asyncio.gather(*agents, return_exceptions=True)
        assert all(isinstance(o, grpc.aio.AioRpcError | AssertionError) for o in outcomes)

    store = open_store(db)
    try:
        stored: set[tuple[str, str]] = set()
        for row in store.sessions():
            events = store.events(row.session_id)
            assert [e.sequence for e in events] == list(range(1, len(events) + 1))
            stored |= {(row.session_id, c) for c in applied_ids(store, row.session_id)}
        assert len(acked) >= 120
        assert acked <= stored
    finally:
        store.close()


async def _play_for_export(channel, control) -> None:
    # A team under FREE_FOR_ALL, solved; reset, and a second episode with another seed, solved.
    created = await create(control, ("lead", "helper"))
    sid = created.session.session_id
    lead, helper = AgentClient(channel), AgentClient(channel)
    await lead.join(sid, created.tokens[0].join_token)
    await helper.join(sid, created.tokens[1].join_token)
    await helper.result_or_error(helper.tool("read_logs", {"service": "payment-service"}))
    await helper.result_or_error(helper.tool("send_message", {"text": "v2.4.2 crash-loops"}))
    await helper.result_or_error(helper.tool("view_file", {"path": "no/such/file.py"}))
    for tool, args in pay_solution(0):
        await lead.result_or_error(lead.tool(tool, args))
    await lead.until_end()
    await control.ResetSession(control_pb2.ResetSessionRequest(session_id=sid, seed=3))
    await lead.expect("episode_start")
    await helper.result_or_error(helper.tool("get_alerts"))
    for tool, args in pay_solution(3):
        await lead.result_or_error(lead.tool(tool, args))
    await lead.expect("episode_end")
    lead.close()
    helper.close()
    # SIMULTANEOUS rounds with DIFFERENCE rewards: one agent fixes, the other reports.
    created = await create(
        control,
        ("x", "y"),
        scenario=OOM,
        policy=common_pb2.TURN_POLICY_SIMULTANEOUS,
        attribution=common_pb2.REWARD_ATTRIBUTION_DIFFERENCE,
    )
    sid = created.session.session_id
    x, y = AgentClient(channel), AgentClient(channel)
    await x.join(sid, created.tokens[0].join_token)
    await y.join(sid, created.tokens[1].join_token)
    (scale, report) = [(s.tool, dict(s.args)) for s in resolve(OOM).instance(0).spec.solution]
    rounds = [
        (("get_alerts", {}), scale),
        (report, ("describe_service", {"service": "user-service"})),  # after the end: refused
    ]
    for x_call, y_call in rounds:
        ids = x.tool(*x_call), y.tool(*y_call)
        await asyncio.gather(x.result_or_error(ids[0]), y.result_or_error(ids[1]))
    await x.until_end()
    x.close()
    y.close()
    # An episode left running: exported only with --all.
    await create(control, ("solo",))


@pytest.mark.parametrize("config", ["sqlite", "postgres"], indirect=True)
async def test_export_round_trips_through_a_fresh_simulator(server, channel, control, tmp_path):
    await _play_for_export(channel, control)
    store = server.store
    assert store is not None
    out = tmp_path / "episodes.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "metasre.cli.main",
            "export",
            "--store",
            store.where,
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "exported 3 episodes" in done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["episode"], r["seed"], r["turn_policy"]) for r in records] == [
        (1, 0, "free_for_all"),
        (2, 3, "free_for_all"),
        (1, 0, "simultaneous"),
    ]
    for record in records:
        messages = record["messages"]
        assert messages[0]["role"] == "system"
        # the record names its instance; the prompt a model learns from does not (a seat is
        # not told its scenario or seed)
        assert record["scenario_id"] not in messages[0]["content"]
        # assistant / tool pairs, one per applied call, ids matching
        pairs = list(zip(messages[1::2], messages[2::2], strict=True))
        assert len(pairs) == len(record["steps"]) > 0
        for (call, answer), step in zip(pairs, record["steps"], strict=True):
            assert call["role"] == "assistant" and answer["role"] == "tool"
            assert call["name"] == step["agent_id"]
            (tool_call,) = call["tool_calls"]
            assert tool_call["id"] == answer["tool_call_id"] == step["call_id"]
            assert tool_call["function"]["name"] == answer["name"] == step["tool"]
            assert isinstance(answer["content"], str) and answer["content"]
        assert {a["agent_id"] for a in record["agents"]} == set(record["agent_rewards"])
        assert record["rewards"] and record["grade"]["final"]

        # Replaying the exported calls in a fresh simulator gives the same grade.
        calls = calls_of(record)
        if record["turn_policy"] == "simultaneous":
            episode = Episode.make(record["scenario_id"], record["seed"])
            replay(episode, calls)
        else:
            episode = Episode.make(record["scenario_id"], record["seed"])
            for call in calls:
                episode.apply(call.agent_id, call.tool, call.args)
        grade = episode.grade()
        assert grade.final
        assert grade.total == pytest.approx(record["grade"]["total"])
        assert [(c.name, c.value) for c in grade.components] == [
            (c["name"], pytest.approx(c["value"])) for c in record["grade"]["components"]
        ]
    # The first episode: the helper's message, its refused call, the solution.
    first = records[0]
    assert [s["tool"] for s in first["steps"]] == [
        "read_logs",
        "send_message",
        "view_file",
        "rollback_deployment",
        "submit_report",
    ]
    assert first["steps"][2]["ok"] is False
    assert first["grade"]["resolved"] is True and first["phase"] == "terminated"
    # The SIMULTANEOUS episode keeps its rounds (the call refused after the end is not there).
    rounds = records[2]
    assert [(s["agent_id"], s["round"]) for s in rounds["steps"]] == [("x", 1), ("y", 1), ("x", 2)]
    assert rounds["grade"]["resolved"] is True
    assert rounds["reward_attribution"] == "difference"
    assert rounds["reward_mode"] == "dense"


def test_export_refuses_a_missing_store_and_unknown_sessions(tmp_path, capsys):
    from metasre.cli.errors import ExitCode
    from metasre.cli.main import main

    def export(*argv: str) -> int:
        return main(["export", *argv])

    db = tmp_path / "none.db"
    assert export("--store", str(db), "--out", "-") == ExitCode.STORE
    assert "no trajectory store" in capsys.readouterr().err
    TrajectoryStore(db).close()
    assert export("--store", str(db), "--session", "nope", "--out", "-") == ExitCode.USAGE
    assert "no session nope" in capsys.readouterr().err
    out = tmp_path / "empty.jsonl"
    assert export("--store", str(db), "--out", str(out), "--all") == 0
    assert out.read_text() == ""


async def test_a_running_episode_is_exported_with_all(server, channel, control, tmp_path):
    from metasre.service.store.export import episodes

    created = await create(control, ("solo",))
    sid = created.session.session_id
    await call_tool(channel, sid, created.tokens[0].join_token, "only", "get_alerts")
    store = server.store
    assert store is not None
    assert list(episodes(store)) == []
    (record,) = episodes(store, [sid], unfinished=True)
    assert record["finished"] is False and record["grade"] is None
    assert record["phase"] == "running"
    assert [m["role"] for m in record["messages"]] == ["system", "assistant", "tool"]
    assert os.path.samefile(store.path, server.config.store_path)
