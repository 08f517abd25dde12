"""The bridge tests: a real server on 127.0.0.1:0 and the bridge on uvicorn, port 0, in process."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

pytest.importorskip("starlette", reason="the bridge extras are not installed (pip install -e '.[dev]')")
pytest.importorskip("uvicorn", reason="the bridge extras are not installed")

import uvicorn  # noqa: E402

from metasre.agents.bridges import Limits, build_app  # noqa: E402
from metasre.agents.client import MetasreClient  # noqa: E402
from metasre.service.server import MetasreServer, prepare_sandbox  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _sandbox() -> None:
    # The fork server starts before any gRPC server or thread exists.
    prepare_sandbox()


class _Server(uvicorn.Server):
    """uvicorn's server, telling when it listens (an event, not a poll)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.listening.set()


@dataclass
class Bridge:
    url: str
    target: str


async def start_bridge(target: str, **kwargs: object) -> tuple[_Server, asyncio.Task[None], str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    limits = kwargs.pop("limits", None)
    app = build_app(lambda: MetasreClient(target), limits=limits, **kwargs)  # type: ignore[arg-type]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", ws_max_size=16 << 20)
    srv = _Server(config)
    task = asyncio.create_task(srv.serve(sockets=[sock]))
    waiter = asyncio.create_task(srv.listening.wait())
    done, _ = await asyncio.wait({task, waiter}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    if waiter not in done:
        waiter.cancel()
        raise RuntimeError("the bridge did not start")
    return srv, task, f"http://127.0.0.1:{port}"


@pytest.fixture
async def bridge(server: MetasreServer) -> AsyncIterator[Bridge]:
    srv, task, url = await start_bridge(server.address, limits=Limits(max_seats=64))
    try:
        yield Bridge(url, server.address)
    finally:
        srv.should_exit = True
        await task
