"""What several test folders share: an in-process server on 127.0.0.1:0.

Folders that need it start the sandbox's fork server first (their own session-wide, autouse
fixture calls `prepare_sandbox`), before any gRPC server or thread exists. tests/service has
its own `server`, built from a `config` fixture that its tests override.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from metasre.service import Limits, ServerConfig, build_server
from metasre.service.server import MetasreServer


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
