"""The Node agent ends each failure with the exit code the `metasre` command line gives it
(issue 28, item 13): its table is `ExitCode`'s numbers, and each failure is met for real, the
Node agent and the CLI side by side where both can meet it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys

from metasre.agents import MetasreClient
from metasre.cli.errors import ExitCode
from metasre.service import ServerConfig, build_server

from .conftest import AGENT_JS, ROOT, TIMEOUT, NodeAgent, run_node

PAY = "meta-sre/payment-bad-deploy-v2"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def _dead_address() -> str:
    """An address on loopback where nothing listens (a port just let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_the_node_agents_exit_table_is_the_clis(node):
    out = subprocess.run(
        [node, "-e", f"console.log(JSON.stringify(require({str(AGENT_JS)!r}).EXIT))"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
        cwd=ROOT,
    )
    table = json.loads(out.stdout)
    assert table, out.stderr
    for name, number in table.items():
        assert ExitCode[name] == number, f"{name}: node says {number}, the CLI {ExitCode[name]}"


async def test_a_dead_target_is_unreachable_for_both(node):
    dead = _dead_address()
    run = await run_node(node, "--target", dead, "--scenario", PAY, "--timeout", "3")
    cli = await asyncio.to_thread(
        _cli, "rollout", "--target", dead, "--scenario", "payment-bad-deploy", "--seeds", "0-0"
    )
    assert run.returncode == cli.returncode == ExitCode.UNREACHABLE, (run.stderr, cli.stderr)


async def test_a_refusal_is_refused_for_both(node):
    server = await build_server(ServerConfig(port=0, admin_token="s3cret-token", grace_seconds=0.2))
    await server.start()
    try:
        env = {k: v for k, v in os.environ.items() if k != "METASRE_ADMIN_TOKEN"}
        run = await run_node(node, "--target", server.address, "--scenario", PAY)
        cli = await asyncio.to_thread(
            _cli,
            *("rollout", "--target", server.address, "--scenario", "payment-bad-deploy"),
            *("--seeds", "0-0", "--no-progress"),
            env=env,
        )
        assert run.returncode == cli.returncode == ExitCode.REFUSED, (run.stderr, cli.stderr)
        assert run.events[-1]["reason"] == "TOKEN_MISSING"
    finally:
        await server.stop(0.2)


async def test_bad_usage_is_usage_for_both(node):
    run = await run_node(node, "--target", "127.0.0.1:1", "--seed", "not-a-number")
    cli = await asyncio.to_thread(_cli, "rollout", "--seeds", "not-a-number")
    assert run.returncode == cli.returncode == ExitCode.USAGE, (run.stderr, cli.stderr)


async def test_ctrl_c_is_interrupted(node, server):
    """SIGINT while the agent waits for teammates that never call: 130, as the CLI's Ctrl-C."""
    async with MetasreClient(server.address) as client:
        session = await client.create_session(PAY, seats=["node", "python"])
        agent = NodeAgent(
            node,
            ["--target", server.address, "--session", session.id, "--wait-teammate-calls", "1"],
            env={"METASRE_JOIN_TOKEN": session.tokens["node"]},
        )
        await agent.start()
        await agent.next_event("joined")
        assert agent.proc is not None
        agent.proc.send_signal(signal.SIGINT)
        run = await agent.finish()
    assert run.returncode == ExitCode.INTERRUPTED, run.stderr
    assert any(e["event"] == "interrupted" for e in run.events)
