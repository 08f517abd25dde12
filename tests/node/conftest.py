"""The Node.js agent run as a real `node` subprocess against tests/conftest.py's server.

These tests need Node.js and the agent's npm packages (`npm ci` in agents/node, which .ci/run
does). Without them every test here is skipped with the reason; nothing else depends on Node.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from metasre.agents.policies import ExpertPolicy
from metasre.conformance import EpisodeCaller
from metasre.service.server import prepare_sandbox
from metasre.simulator import Episode

ROOT = Path(__file__).resolve().parents[2]
NODE_AGENT = ROOT / "agents" / "node"
AGENT_JS = NODE_AGENT / "agent.js"
TIMEOUT = 60.0
"""Upper bound on one Node agent run; a hang fails instead of blocking CI."""


def node_or_skip() -> str:
    """The `node` executable, or skip the test saying what is missing and how to get it."""
    node = shutil.which("node")
    if node is None:
        pytest.skip(
            "node is not on PATH: the Node.js agent tests need Node 18+ "
            "(CI has Node 20; .ci/run installs the agent's packages)"
        )
    if not (NODE_AGENT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.skip(
            "agents/node/node_modules is missing: run `npm ci` in agents/node "
            "(.ci/run does it before pytest)"
        )
    return node


@pytest.fixture(scope="session", autouse=True)
def node() -> str:
    node = node_or_skip()
    # The fork server starts before any gRPC server or thread exists.
    prepare_sandbox()
    return node


def expert_grade(scenario: str, seed: int) -> float:
    """The Python expert's grade on the same scenario and seed, played in process."""
    episode = Episode.make(scenario, seed=seed)
    ExpertPolicy().play(EpisodeCaller(episode, "expert"), episode.observation().to_dict())
    return episode.grade().total


@dataclass
class NodeRun:
    """A finished Node agent run: its exit code, its outcome JSON and its progress lines."""

    returncode: int
    outcome: dict[str, Any]
    events: list[dict[str, Any]]
    stderr: str


class NodeAgent:
    """`node agents/node/agent.js ...` as an asyncio subprocess (the server's loop keeps going)."""

    def __init__(
        self, node: str, args: Sequence[Any], env: Mapping[str, str] | None = None
    ) -> None:
        self.node = node
        self.args = [str(a) for a in args]
        self.env = {**os.environ, **(env or {})}
        self.proc: asyncio.subprocess.Process | None = None
        self.events: list[dict[str, Any]] = []
        self._stderr: list[str] = []

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            self.node,
            str(AGENT_JS),
            *self.args,
            cwd=ROOT,
            env=self.env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )

    async def next_event(self, name: str) -> dict[str, Any]:
        """Read progress lines until the event `name`; fails if the agent exits first."""
        assert self.proc is not None and self.proc.stderr is not None
        while True:
            line = await asyncio.wait_for(self.proc.stderr.readline(), TIMEOUT)
            assert line, f"the node agent exited before {name!r}: {''.join(self._stderr)}"
            text = line.decode()
            self._stderr.append(text)
            if text.startswith("{"):
                event = json.loads(text)
                self.events.append(event)
                if event.get("event") == name:
                    return event

    async def finish(self) -> NodeRun:
        assert self.proc is not None
        try:
            out, err = await asyncio.wait_for(self.proc.communicate(), TIMEOUT)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
            raise
        rest = err.decode()
        self._stderr.append(rest)
        self.events += [json.loads(x) for x in rest.splitlines() if x.startswith("{")]
        stdout = out.decode()
        outcome = json.loads(stdout) if stdout.strip() else {}
        assert self.proc.returncode is not None
        return NodeRun(self.proc.returncode, outcome, self.events, "".join(self._stderr))


async def run_node(node: str, *args: Any) -> NodeRun:
    agent = NodeAgent(node, args)
    await agent.start()
    return await agent.finish()
