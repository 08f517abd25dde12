"""The load test's short variant (the long one: `metasre loadtest`, 200+ sessions).

Concurrent sessions of the scripted expert and the random baseline against a real `metasre
serve`, with dropped-and-resumed streams, calls retried under the same call_id and bad requests:
no unexpected error, every episode graded, the server's memory back within tolerance of its
baseline. A second test counts objects instead of bytes: after a wave against an in-process
server, no session, episode, coordinator or agent stream is left alive (a leak of any of them is
exact here, where RSS has noise).
"""

from __future__ import annotations

import asyncio
import gc

from metasre.agents.client import MetasreClient
from metasre.cli.loadtest import LoadReport, run_load, wave
from metasre.service import Limits, ServerConfig, build_server
from metasre.service.core.coordinator import Coordinator
from metasre.service.core.session import Session
from metasre.service.wire.agent import AgentStream
from metasre.simulator import Episode


async def test_a_short_load_run_has_no_unexpected_error_and_grades_every_episode(tmp_path):
    report = await run_load(40, warmup=10, seed=3, drop_rate=0.08, bad_rate=0.3, workdir=tmp_path)
    print("\n" + report.render())
    assert report.unexpected == []
    assert report.graded == report.sessions == 40
    assert report.drops > 0 and report.retried_once == report.drops
    assert set(report.expected_errors) == {
        "UNKNOWN_TOOL",
        "INVALID_ARGUMENTS",
        "TOKEN_INVALID",
        "EPISODE_OVER",
    }
    assert report.calls > 200
    assert report.rss_ok, report.to_dict()["rss_mb"]
    assert report.ok


async def test_nothing_of_a_closed_session_stays_alive(tmp_path):
    server = await build_server(
        ServerConfig(
            port=0,
            limits=Limits(max_sessions=100, seat_grace_seconds=60.0),
            store_path=tmp_path / "store.db",
        )
    )
    await server.start()
    try:
        async with MetasreClient(server.address) as client:
            report = LoadReport(sessions=16)
            await wave(client, 16, 5, report, 0.2, 0.5)
            assert report.unexpected == []
            assert report.drops > 0  # dropped seats are kept 60 s, unless their session closes
        # Until the last stream's tasks have ended (state, polled; bounded).
        for _ in range(200):
            gc.collect()
            alive = [
                o for o in gc.get_objects() if isinstance(o, Session | Coordinator | AgentStream)
            ]
            if not alive:
                break
            await asyncio.sleep(0.01)
        assert alive == []
        assert not [o for o in gc.get_objects() if isinstance(o, Episode)]
        assert server.registry.sessions() == []
    finally:
        await server.stop(0.5)
