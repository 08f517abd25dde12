"""A server makes its episodes with the catalogue it was given, not the process's."""

from __future__ import annotations

import asyncio

from metasre.agents.policies import ExpertPolicy
from metasre.agents.rollout import EpisodeSpec, run_rollout, solo_player
from metasre.agents.sync import SyncClient
from metasre.service import Limits, ServerConfig, build_server

AD = "meta-sre/ad-ranking-crash-v2"


async def test_a_server_makes_its_episodes_with_the_catalogue_it_was_given(recorded_catalog):
    catalog, _, traffic = recorded_catalog()
    server = await build_server(
        ServerConfig(port=0, limits=Limits(turn_timeout_seconds=10.0), grace_seconds=1.0),
        catalog=catalog,
    )
    await server.start()
    try:

        def play() -> bool:
            with SyncClient(server.address) as client:
                report = run_rollout(
                    client, solo_player(lambda seed: ExpertPolicy()), [EpisodeSpec(0, AD, 0)]
                )
            return report.results[0].resolved

        assert await asyncio.to_thread(play)
    finally:
        await server.stop(0.5)
    assert traffic.runs  # the expert's edit was served on the catalogue's traffic runner
