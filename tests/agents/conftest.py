"""A real server on 127.0.0.1:0 for the client and agent tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from metasre.service import Limits, ServerConfig, build_server
from metasre.service.server import MetasreServer, prepare_sandbox


@pytest.fixture(scope="session", autouse=True)
def _sandbox() -> None:
    # The fork server starts before any gRPC server or thread exists.
    prepare_sandbox()


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
