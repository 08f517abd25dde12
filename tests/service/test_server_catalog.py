"""A server makes its episodes with the catalogue it was given, not the process's."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from metasre.agents.policies import ExpertPolicy
from metasre.agents.rollout import EpisodeSpec, run_rollout, solo_player
from metasre.agents.sync import SyncClient
from metasre.service import Limits, ServerConfig, build_server
from metasre.simulator.catalog import Catalog
from metasre.simulator.sandbox import (
    ProbeReport,
    ProbeRunner,
    SandboxLimits,
    default_traffic_runner,
)

AD = "meta-sre/ad-ranking-crash-v2"


@dataclass
class Recording:
    """A real runner that counts the runs it serves."""

    inner: ProbeRunner
    runs: list[str] = field(default_factory=list)

    def observe(
        self,
        files: Mapping[str, bytes],
        probe_file: str,
        probes: Sequence[str],
        *,
        limits: SandboxLimits | None = None,
    ) -> ProbeReport:
        self.runs.append(probe_file)
        return self.inner.observe(files, probe_file, probes, limits=limits)

    def close(self) -> None:
        """The shared runner is not ours to close."""


async def test_a_server_makes_its_episodes_with_the_catalogue_it_was_given():
    traffic = Recording(default_traffic_runner())
    catalog = Catalog(traffic=traffic)
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
