"""Past episodes live in the store, not in the server's memory, and stay readable.

Before, a session's log held every episode it ever played for the session's life: 300 resets of
one session grew the server by 64 MB. With a store, a reset now lets go of the episodes before
it; GetTrajectory and WatchSession read them back from the store, the same events in the same
order as they were heard live.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc

from metasre.service import Limits, ServerConfig, build_server
from metasre.v1 import control_pb2, control_pb2_grpc, watch_pb2, watch_pb2_grpc

from .conftest import TIMEOUT, AgentClient, create, owned_channel

RESETS = 6


async def collect(watch: Any, until: int) -> list[Any]:
    """Events of a watch until one with sequence `until` (inclusive)."""
    events = []
    while True:
        reply = await asyncio.wait_for(watch.read(), TIMEOUT)
        assert reply is not grpc.aio.EOF
        events.append(reply.event)
        if reply.event.sequence >= until:
            return events


async def test_resets_let_go_of_past_episodes_which_stay_readable(tmp_path: Path):
    config = ServerConfig(
        port=0, store_path=tmp_path / "store.db", limits=Limits(), grace_seconds=0.5
    )
    server = await build_server(config)
    await server.start()
    channel = owned_channel(server.address)
    try:
        control = control_pb2_grpc.ControlServiceStub(channel)
        watcher = watch_pb2_grpc.WatchServiceStub(channel)
        created = await create(control, ("a",))
        sid = created.session.session_id
        live = watcher.WatchSession(watch_pb2.WatchSessionRequest(session_id=sid))
        client = AgentClient(channel)
        await client.join(sid, created.tokens[0].join_token)
        held = []
        for n in range(RESETS):
            for tool in ("get_alerts", "check_dependencies"):
                reply = await client.result_or_error(client.tool(tool))
                assert reply.WhichOneof("response") == "result"
            await control.ResetSession(control_pb2.ResetSessionRequest(session_id=sid))
            session, _ = server.registry.get(sid)
            held.append(len(session.log))
            assert {e.episode for e in session.log} == {n + 2}
        # Only the current episode is held, however many came before.
        assert max(held) == min(held)
        last = server.registry.get(sid)[0].end
        heard = await collect(live, last)
        assert [e.sequence for e in heard] == list(range(1, last + 1))

        for episode in range(1, RESETS + 2):
            got = await control.GetTrajectory(
                control_pb2.GetTrajectoryRequest(session_id=sid, episode=episode)
            )
            assert list(got.events) == [e for e in heard if e.episode == episode], episode

        # A watch from a past episode replays it from the store, then the rest, then live.
        late = watcher.WatchSession(
            watch_pb2.WatchSessionRequest(session_id=sid, episode=2, from_tick=1)
        )
        replayed = await collect(late, last)
        first = next(i for i, e in enumerate(heard) if e.episode == 2 and e.tick >= 1)
        assert replayed == heard[first:]
        reply = await client.result_or_error(client.tool("get_alerts"))
        # Both watches go on live, alike: the call and the reward that follows it.
        news = await collect(late, reply.sequence + 1)
        assert news == await collect(live, reply.sequence + 1)
        assert [e.sequence for e in news] == [reply.sequence, reply.sequence + 1]
        client.close()
        late.cancel()
        live.cancel()
    finally:
        await channel.close()
        await server.stop(0.5)
