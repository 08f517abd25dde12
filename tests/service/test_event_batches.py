"""StreamOptions.batch_events: the events that become durable together come as one EventBatch,
and a batched stream hears exactly what an unbatched one hears, in the same order.

A real server on 127.0.0.1:0 with a store (so events become durable in group commits).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

import grpc
import pytest

from metasre.agents.client import MetasreClient
from metasre.service import Limits, ServerConfig
from metasre.v1 import agent_pb2

from .conftest import AgentClient, create, pay_solution


@pytest.fixture
def config(tmp_path: Path) -> ServerConfig:
    return ServerConfig(
        port=0,
        limits=Limits(turn_timeout_seconds=10.0),
        grace_seconds=0.5,
        store_path=tmp_path / "store.db",
    )


def batched(sid: str, token: str, *, resume: bool = False) -> agent_pb2.ConnectRequest:
    options = agent_pb2.StreamOptions(batch_events=True)
    if resume:
        return agent_pb2.ConnectRequest(
            resume=agent_pb2.ResumeSeat(session_id=sid, resume_token=token, options=options)
        )
    return agent_pb2.ConnectRequest(
        join=agent_pb2.JoinSeat(session_id=sid, join_token=token, options=options)
    )


def events(messages: list[agent_pb2.ConnectResponse]) -> list[bytes]:
    """Every event of the session's log among `messages`, batches opened, serialized."""
    out: list[bytes] = []
    for m in messages:
        kind = m.WhichOneof("response")
        if kind == "batch":
            for inner in m.batch.events:
                assert inner.WhichOneof("response") != "batch", "a batch inside a batch"
                assert inner.sequence > 0
            assert m.sequence == m.batch.events[-1].sequence
            out += [e.SerializeToString(deterministic=True) for e in m.batch.events]
        elif m.sequence:
            out.append(m.SerializeToString(deterministic=True))
    return out


def kinds(messages: Iterable[agent_pb2.ConnectResponse]) -> list[str]:
    """What each message or event is, batches opened."""
    out: list[str] = []
    for m in messages:
        kind = m.WhichOneof("response")
        out += kinds(m.batch.events) if kind == "batch" else [kind]
    return out


async def test_a_batched_replay_is_the_unbatched_stream_in_one_message(channel, control):
    created = await create(control, ("a", "b"))
    sid = created.session.session_id
    a, b = AgentClient(channel), AgentClient(channel)
    joined = await a.join(sid, created.tokens[0].join_token)
    await b.join(sid, created.tokens[1].join_token)
    for tool, args in [*pay_solution()[:-1], ("get_alerts", {})]:
        await a.result_or_error(a.tool(tool, args))
        await b.result_or_error(b.tool("get_alerts"))
        await a.expect("applied", lambda m: m.applied.agent_id == "b")
    a.close()  # hang up in order (the seat is free at once), hearing the rest first
    while (rest := await a.call.read()) is not grpc.aio.EOF:
        a.received.append(rest)
    heard = events(a.received)
    assert len(heard) >= 8
    assert all(m.WhichOneof("response") != "batch" for m in a.received)  # not asked for

    # A resume from the start of the episode replays everything as one run of the log.
    again = AgentClient(channel)
    again.send(batched(sid, joined.resume_token, resume=True))
    await again.expect("joined")
    replay = await again.receive()
    assert replay.WhichOneof("response") == "batch"
    assert events([replay]) == heard
    again.close()
    await again.call.code()
    b.close()


async def test_events_committed_together_come_together(channel, control):
    created = await create(control, ("a", "b", "c"))
    sid = created.session.session_id
    streams = [AgentClient(channel) for _ in range(3)]
    for stream, token in zip(streams, created.tokens, strict=True):
        stream.send(batched(sid, token.join_token))
        stream.agent_id = (await stream.expect("joined")).joined.agent_id
    # Three calls at once under SHARED rewards: each earns every seat a reward.
    for s in streams:
        s.tool("get_alerts")
    for stream in streams:
        while sum(k in ("result", "applied") for k in kinds(stream.received)) < 3:
            await stream.receive()
    # Whatever the grouping, each stream's events are in log order with nothing missing.
    for stream in streams:
        sequences = [
            e.sequence
            for m in stream.received
            for e in (m.batch.events if m.WhichOneof("response") == "batch" else [m])
            if e.sequence
        ]
        assert sequences == sorted(set(sequences))
    # A call's result (or applied call) and the rewards it earned are appended in one step,
    # so they are durable together and come in one message: at most 3 messages for 3 calls
    # (fewer if two steps were committed before the stream woke), never 6.
    for stream in streams:
        calls = [m for m in stream.received if m.WhichOneof("response") != "joined"][1:]
        assert kinds(stream.received[:2]) == ["joined", "episode_start"]
        assert 1 <= len(calls) <= 3
        assert all(m.WhichOneof("response") == "batch" for m in calls)
        heard = " ".join(kinds(calls))
        assert heard.count("reward") == 3
        assert heard.replace("result reward", "").replace("applied reward", "").strip() == ""
    for s in streams:
        s.close()


async def test_the_sdk_hears_the_same_with_and_without_batches(server):
    async with MetasreClient(server.address) as client:
        inboxes = []
        for batch in (True, False):
            session = await client.create_session(
                "meta-sre/payment-bad-deploy-v2", seats=["a", "b"]
            )
            a = client.agent(session.id, session.tokens["a"], batch_events=batch)
            b = client.agent(session.id, session.tokens["b"], batch_events=batch)
            await asyncio.gather(a.join(), b.join())
            results, seen = [], 0
            for tool, args in pay_solution():
                if results:  # a teammate's call between a's calls: more events to batch
                    await b.call("get_alerts")
                results.append(await a.call(tool, args))
            while b.inbox.episode_end is None:
                seen = await b.next_news(seen, timeout=5)
            inboxes.append(
                (
                    [(r.tick, r.ok, r.text, r.data, r.reward) for r in results],
                    [(x["tick"], x["tool"], x.get("data")) for x in b.inbox.applied],
                    [(x["tick"], x.get("total")) for x in b.inbox.rewards],
                    b.inbox.episode_end["grade"],
                    b.last_sequence,
                )
            )
            await a.close()
            await b.close()
        assert inboxes[0] == inboxes[1]
