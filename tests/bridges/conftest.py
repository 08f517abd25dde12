"""The bridge tests: a real server on 127.0.0.1:0 and the bridge on uvicorn, port 0, in process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip(
    "starlette", reason="the bridge extras are not installed (pip install -e '.[dev]')"
)
pytest.importorskip("uvicorn", reason="the bridge extras are not installed")

from metasre.agents.bridges import (
    Limits,
    build_app,
    run,
)
from metasre.agents.client import MetasreClient
from metasre.cli.bridge import FamilySplits
from metasre.service.server import MetasreServer, prepare_sandbox


@pytest.fixture(scope="session", autouse=True)
def _sandbox() -> None:
    # The fork server starts before any gRPC server or thread exists.
    prepare_sandbox()


@dataclass
class Bridge:
    url: str
    target: str


async def start_bridge(
    target: str, limits: Limits | None = None, **kwargs: Any
) -> tuple[run.BridgeServer, asyncio.Task[None], str]:
    sock = run.bind("127.0.0.1", 0)
    limits = limits or Limits()
    kwargs.setdefault("splits", FamilySplits())
    app = build_app(lambda: MetasreClient(target), limits=limits, **kwargs)
    srv = run.server_for(app, limits.max_message_bytes)
    task = asyncio.create_task(srv.serve(sockets=[sock]))
    waiter = asyncio.create_task(srv.listening.wait())
    done, _ = await asyncio.wait({task, waiter}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    if waiter not in done:
        waiter.cancel()
        raise RuntimeError("the bridge did not start")
    return srv, task, run.url_of(sock)


@pytest.fixture
async def bridge(server: MetasreServer) -> AsyncIterator[Bridge]:
    srv, task, url = await start_bridge(server.address, Limits(max_seats=64))
    try:
        yield Bridge(url, server.address)
    finally:
        srv.should_exit = True
        await task
