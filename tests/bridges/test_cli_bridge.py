"""`metasre bridge openenv` as a real subprocess in front of a real server: it says where it
listens, serves OpenEnv's client and the MCP side, and stops on SIGTERM (its mistakes are
in tests/test_cli_usage.py)."""

from __future__ import annotations

import asyncio
import json
import signal
import sys

import httpx
import pytest

from metasre.service.server import MetasreServer

pytest.importorskip("openenv", reason="openenv is not installed (pip install -e '.[dev]')")

from openenv import GenericEnvClient


async def test_the_bridge_command_serves_until_sigterm(server: MetasreServer) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "metasre.cli.main",
        "bridge",
        "openenv",
        "--mcp",
        "--target",
        server.address,
        "--port",
        "0",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        said = json.loads(line)
        assert said["event"] == "serving"
        url = said["url"]
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{url}/health")).json()["status"] == "healthy"
            made = await http.post(f"{url}/sessions", json={"scenario": "payment-bad-deploy"})
            assert made.status_code == 200  # --mcp serves the MCP side too
        async with GenericEnvClient(base_url=url) as env:
            first = await env.reset(scenario="payment-bad-deploy", seed=2)
            assert first.observation["text"]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode in (0, -signal.SIGTERM), err.decode()[-2000:]
    assert b"Traceback" not in err
