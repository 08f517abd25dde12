"""What several test folders share: an in-process server on 127.0.0.1:0, recorded catalogues.

Folders that need it start the sandbox's fork server first (their own session-wide, autouse
fixture calls `prepare_sandbox`), before any gRPC server or thread exists. tests/service has
its own `server`, built from a `config` fixture that its tests override.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pytest

from metasre.service import Limits, ServerConfig, build_server
from metasre.service.server import MetasreServer
from metasre.simulator.catalog import Catalog
from metasre.simulator.sandbox import (
    ProbeReport,
    ProbeRunner,
    SandboxLimits,
    default_grader_runner,
    default_traffic_runner,
)


@pytest.fixture
async def server() -> AsyncIterator[MetasreServer]:
    srv = await build_server(
        ServerConfig(port=0, limits=Limits(turn_timeout_seconds=10.0), grace_seconds=1.0)
    )
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(0.5)


@dataclass
class Recording:
    """A real probe runner that counts the runs it serves."""

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


RecordedCatalog = tuple[Catalog, Recording, Recording]
"""A catalogue of its own, and its grader and traffic runners, counting."""


@pytest.fixture
def recorded_catalog() -> Callable[[], RecordedCatalog]:
    """Makes catalogues of their own over the shared runners, each counting its probe runs."""

    def make() -> RecordedCatalog:
        grader, traffic = Recording(default_grader_runner()), Recording(default_traffic_runner())
        return Catalog(grader=grader, traffic=traffic), grader, traffic

    return make
