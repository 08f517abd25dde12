"""The official `mcp` Python clients play seats through the MCP server per seat.

`mcp` 1.x (the release OpenEnv 0.10's fastmcp 3 installs beside it) runs in this process;
`mcp` 2.x runs as a subprocess from its own environment (`.ci/run` makes `.venv-mcp2`), since
one environment cannot hold openenv 0.10 and mcp 2; the official TypeScript SDK runs under
node from tests/bridges/node.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("mcp", reason="mcp is not installed (pip install -e '.[dev]')")

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from metasre.agents.bridges.mcp import PROTOCOL_VERSIONS
from metasre.agents.policies import ExpertPolicy, ToolReply
from metasre.service.server import MetasreServer

from .conftest import Bridge

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "payment-bad-deploy"


async def create(url: str, **params: Any) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(f"{url}/sessions", json={"scenario": SCENARIO, **params})
    assert response.status_code == 200, response.text
    return dict(response.json())


class McpCaller:
    """The scripted expert's ToolCaller over an MCP client session in another thread's loop."""

    def __init__(self, session: ClientSession, loop: asyncio.AbstractEventLoop) -> None:
        self.session, self.loop = session, loop
        self.results: list[Any] = []

    def __call__(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        future = asyncio.run_coroutine_threadsafe(
            self.session.call_tool(tool, dict(args)), self.loop
        )
        result = future.result(60)
        self.results.append(result)
        content = result.structuredContent or {}
        error = content.get("error")
        return ToolReply(
            not result.isError,
            result.content[0].text if result.content else "",  # type: ignore[union-attr]
            content.get("data") or {},
            bool(content.get("done")),
            None if error is None else error.get("code"),
        )


async def test_mcp1_client_lists_calls_and_finishes_an_episode(
    bridge: Bridge, server: MetasreServer
) -> None:
    made = await create(bridge.url, seed=4, seats=["oncall"])
    seat = made["seats"]["oncall"]
    headers = {"Authorization": f"Bearer {seat['token']}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(seat["mcp_url"], http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        assert "oncall" in (init.instructions or "")
        listed = await session.list_tools()
        schemas = {t.name: t.inputSchema for t in listed.tools}
        assert schemas["read_logs"]["type"] == "object"
        assert "submit_report" in schemas
        # The dashboard the expert starts from, as the reset of the OpenEnv side gives it.
        first = await session.call_tool("get_alerts", {})
        assert not first.isError and first.structuredContent["done"] is False
        resource = await session.read_resource("metasre://seat/dashboard")
        dashboard = json.loads(resource.contents[0].text)  # type: ignore[union-attr]
        assert dashboard["alerts"] and dashboard["services"]
        caller = McpCaller(session, asyncio.get_running_loop())
        await asyncio.to_thread(ExpertPolicy().play, caller, dashboard)
        end = caller.results[-1].structuredContent
        assert end["done"] is True and end["metadata"]["resolved"] is True
        rewards = [first.structuredContent["reward"]] + [
            r.structuredContent["reward"] for r in caller.results
        ]
        assert math.isclose(sum(rewards), end["metadata"]["reward_total"], abs_tol=1e-9)
        assert "episode over" in caller.results[-1].content[0].text  # type: ignore[union-attr]
        # After the end, a call answers with the end again, never an error.
        again = await session.call_tool("get_alerts", {})
        assert not again.isError and again.structuredContent["done"] is True
    # The client deleted its MCP session on the way out: the episode over and its last seat
    # gone, the bridge closed the session it made.
    assert made["session_id"] not in {s.id for s in server.registry.sessions()}


def _mcp2_python() -> list[str]:
    configured = os.environ.get("METASRE_MCP2_PYTHON")
    path = Path(configured) if configured else ROOT / ".venv-mcp2" / "bin" / "python"
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(".venv-mcp2 is missing: .ci/run makes it (pip install mcp==2.3.0)")
        pytest.skip(
            "no mcp 2.x environment: python3 -m venv .venv-mcp2 && "
            ".venv-mcp2/bin/pip install mcp==2.3.0"
        )
    return [str(path), str(Path(__file__).with_name("mcp2_client.py"))]


def _typescript_sdk() -> list[str]:
    node = shutil.which("node")
    folder = Path(__file__).with_name("node")
    if node is None or not (folder / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.skip(
            "the TypeScript MCP SDK check needs node and `npm ci` in tests/bridges/node "
            "(.ci/run does both where Node is installed)"
        )
    return [node, str(folder / "mcp_client.mjs")]


CLIENTS = {"mcp2-python": _mcp2_python, "typescript-sdk": _typescript_sdk}
"""The MCP clients run as subprocesses: the Python SDK's 2.x (it cannot share this
environment with openenv 0.10) and a second language's official SDK."""


@pytest.mark.parametrize("client", sorted(CLIENTS))
async def test_an_outside_mcp_client_lists_calls_is_refused_and_finishes_an_episode(
    bridge: Bridge, client: str
) -> None:
    command = CLIENTS[client]()
    made = await create(bridge.url, seed=9, seats=["solo"], reward_mode="SPARSE")
    seat = made["seats"]["solo"]
    report = {
        "root_cause_service": "order-service",
        "root_cause_location": "service:order-service",
        "category": "bad_deployment",
        "remediation": "rollback_deployment",
        "summary": "a guess filed without looking further, to end the episode",
        "timeline": ["paged"],
    }
    plan = [
        ["get_alerts", {}],
        ["read_logs", {"service": "no-such-service"}],
        ["read_logs", {"bogus": 1}],
        ["submit_report", report],
        ["get_alerts", {}],
    ]
    proc = await asyncio.create_subprocess_exec(
        *command,
        seat["mcp_url"],
        seat["token"],
        json.dumps(plan),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()[-3000:]
    lines = [json.loads(line) for line in out.decode().splitlines()]
    assert lines[0]["protocol_version"] in PROTOCOL_VERSIONS
    assert "solo" in lines[0]["instructions"]
    assert "submit_report" in lines[1]["tools"]
    alerts, unknown, invalid, submitted, after = lines[2:]
    assert alerts["is_error"] is False and alerts["structured"]["reward"] == 0.0  # SPARSE
    assert unknown["is_error"] is True  # a wrong call inside the world: its text says what exists
    assert "no-such-service" in unknown["text"][0]
    assert invalid["is_error"] is True
    assert invalid["structured"]["error"]["violations"]  # refused by the server's validation
    assert submitted["structured"]["done"] is True
    grade = submitted["structured"]["metadata"]
    assert isinstance(grade["team_grade"], float) and grade["phase"].endswith("TERMINATED")
    assert after["structured"]["done"] is True and after["is_error"] is False
