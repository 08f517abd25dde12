"""Sessions side by side, watching from any tick, resuming a seat."""

from __future__ import annotations

import asyncio

from metasre.v1 import agent_pb2, control_pb2, watch_pb2, watch_pb2_grpc

from .conftest import TIMEOUT, AgentClient, create, pay_solution


async def solve(channel, control, seed: int) -> tuple[str, list[tuple[int, str, str, str]]]:
    created = await create(control, ("a", "b"), seed=seed)
    sid = created.session.session_id
    a, b = AgentClient(channel), AgentClient(channel)
    await a.join(sid, created.tokens[0].join_token)
    await b.join(sid, created.tokens[1].join_token)
    await b.result_or_error(b.tool("read_logs", {"service": "payment-service"}))
    await b.result_or_error(b.tool("run_tests", {"suite": "integration"}))
    for tool, args in pay_solution(seed):
        reply = await a.result_or_error(a.tool(tool, args))
        assert reply.WhichOneof("response") == "result", reply
    await a.until_end()
    trajectory = await control.GetTrajectory(control_pb2.GetTrajectoryRequest(session_id=sid))
    a.close()
    b.close()
    return sid, [
        (e.tick, e.applied.agent_id, e.applied.tool, e.applied.text)
        for e in trajectory.events
        if e.WhichOneof("event") == "applied"
    ]


async def test_two_sessions_in_parallel_do_not_affect_each_other(channel, control):
    (_, first), (_, second) = await asyncio.gather(
        solve(channel, control, 0), solve(channel, control, 0)
    )
    (_, alone) = await solve(channel, control, 0)
    assert first == second == alone
    assert [t for t, *_ in first] == [1, 2, 3, 4]


async def test_watch_from_tick_zero_reproduces_the_log(channel, control):
    sid, _ = await solve(channel, control, 1)
    trajectory = await control.GetTrajectory(control_pb2.GetTrajectoryRequest(session_id=sid))
    watch = watch_pb2_grpc.WatchServiceStub(channel).WatchSession(
        watch_pb2.WatchSessionRequest(session_id=sid, from_tick=0)
    )
    seen = []
    while len(seen) < len(trajectory.events):
        seen.append((await asyncio.wait_for(watch.read(), TIMEOUT)).event)
    assert seen == list(trajectory.events)
    assert seen[-1].WhichOneof("event") == "ended"
    # From tick 3 on: exactly the tail of the log.
    tail = watch_pb2_grpc.WatchServiceStub(channel).WatchSession(
        watch_pb2.WatchSessionRequest(session_id=sid, from_tick=3)
    )
    first = (await asyncio.wait_for(tail.read(), TIMEOUT)).event
    assert first == next(e for e in trajectory.events if e.tick >= 3)
    watch.cancel()
    tail.cancel()


async def test_live_watch_sees_every_event_in_order(channel, control):
    created = await create(control, ("a",))
    sid = created.session.session_id
    watch = watch_pb2_grpc.WatchServiceStub(channel).WatchSession(
        watch_pb2.WatchSessionRequest(session_id=sid)
    )
    a = AgentClient(channel)
    await a.join(sid, created.tokens[0].join_token)
    for tool, args in pay_solution():
        await a.result_or_error(a.tool(tool, args))
    seen = []
    while not seen or seen[-1].WhichOneof("event") != "ended":
        seen.append((await asyncio.wait_for(watch.read(), TIMEOUT)).event)
    trajectory = await control.GetTrajectory(control_pb2.GetTrajectoryRequest(session_id=sid))
    assert seen == list(trajectory.events)
    assert [e.sequence for e in seen] == list(range(1, len(seen) + 1))
    watch.cancel()
    a.close()


async def test_resume_takes_the_seat_back_and_replays_what_was_missed(channel, control):
    created = await create(control, ("a", "b"))
    sid = created.session.session_id
    a = AgentClient(channel)
    joined = await a.join(sid, created.tokens[0].join_token)
    first = await a.result_or_error(a.tool("get_alerts"))
    a.call.cancel()  # the stream drops
    b = AgentClient(channel)
    await b.join(sid, created.tokens[1].join_token)
    await b.result_or_error(b.tool("check_dependencies"))
    again = AgentClient(channel)
    again.send(
        agent_pb2.ConnectRequest(
            resume=agent_pb2.ResumeSeat(
                session_id=sid, resume_token=joined.resume_token, after_sequence=first.sequence
            )
        )
    )
    await again.expect("joined")
    missed = await again.expect("applied")
    assert (missed.applied.agent_id, missed.applied.tick) == ("b", 2)
    again.agent_id = "a"
    reply = await again.result_or_error(again.tool("get_alerts", call_id="after-resume"))
    assert reply.result.tick == 3
    again.close()
    b.close()
