"""The Node.js client on a fleet (`metasre serve --workers 2`): it follows sessions to their shard.

The agent talks only to the directory's address: a session it creates lives on the shard
CreateSession names, and a session someone else created is found through the directory's
refusal (NOT_FOUND / SESSION_ON_OTHER_SHARD, which names the holder).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from metasre.agents.client import MetasreClient
from metasre.service.process import start_serve, stop_child
from metasre.simulator import Episode

from .conftest import ROOT, TIMEOUT, NodeAgent, expert_grade, run_node

AD = "meta-sre/ad-ranking-crash-v2"


@contextlib.asynccontextmanager
async def fleet(tmp_path: Path) -> AsyncIterator[str]:
    async with fleet_process(tmp_path) as (_, address):
        yield address


@contextlib.asynccontextmanager
async def fleet_process(tmp_path: Path) -> AsyncIterator[tuple[Any, str]]:
    env = {k: v for k, v in os.environ.items() if k != "METASRE_ADMIN_TOKEN"}
    with (tmp_path / "fleet.log").open("wb") as log:
        proc, address = await start_serve(
            "--workers", "2", "--port", "0", "--store", str(tmp_path / "fleet.db"),
            stderr=log, cwd=tmp_path, env=env, timeout=120.0,
        )  # fmt: skip
        try:
            yield proc, address
        finally:
            await stop_child(proc)


async def test_the_node_agent_plays_through_a_fleets_directory(node: str, tmp_path: Path) -> None:
    async with fleet(tmp_path) as address:
        floor = expert_grade(AD, 0)
        run = await run_node(
            node, "--target", address, "--scenario", AD, "--seed", 0, "--min-grade", floor
        )
        assert run.returncode == 0, run.stderr
        assert run.outcome["grade"]["resolved"]
        # its owner reads the grade through the directory, which forwards to the shard
        assert run.outcome["owner_grade"] == pytest.approx(run.outcome["grade"]["total"])

        # a seat of a session made by another client: the join is sent on to the holder
        async with MetasreClient(address) as client:
            handle = await client.create_session(AD, seed=0)
            agent = NodeAgent(
                node,
                ["--target", address, "--session", handle.id],
                env={"METASRE_JOIN_TOKEN": handle.tokens["agent"]},
            )
            await agent.start()
            joined = await agent.next_event("joined")
            assert joined["session_id"] == handle.id
            done = await agent.finish()
            assert done.returncode == 0, done.stderr
            grade = await client.get_grade(handle.id)
            assert grade["grade"]["resolved"]


RESUMING = r"""
const { MetasreClient } = require("./agents/node/metasre");
const [address, owner, sessionId, token, stepsJson] = process.argv.slice(1);
const steps = JSON.parse(stepsJson);
const half = Math.floor(steps.length / 2);
const client = new MetasreClient(address, { ownerToken: owner });
(async () => {
  const agent = client.agent(sessionId, token);
  await agent.join();
  for (const [tool, args] of steps.slice(0, half)) await agent.call(tool, args);
  process.stderr.write("halfway\n");
  await new Promise((resolve) => process.stdin.once("data", resolve));
  // the shard is dead now: no resume, no re-dial here, the client does it
  for (const [tool, args] of steps.slice(half)) await agent.call(tool, args);
  agent.close();
  return (await client.getGrade(sessionId)).grade;
})()
  .then((grade) => process.stdout.write(JSON.stringify({ grade })))
  .catch((e) => process.stdout.write(JSON.stringify({ error: { code: e.code, msg: e.message } })))
  .finally(() => { client.close(); process.stdin.destroy(); });
"""


def _shard_on(supervisor: int, endpoint: str) -> int:
    """The pid of the supervisor's shard serving `endpoint` (its command line names the port)."""
    port = endpoint.rsplit(":", 1)[1].encode()
    for task in Path(f"/proc/{supervisor}/task").iterdir():
        for pid in (task / "children").read_text().split():
            if port in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                return int(pid)
    raise AssertionError(f"no shard of {supervisor} serves {endpoint}")


async def test_the_node_client_resumes_by_itself_after_its_shard_is_killed(
    node: str, tmp_path: Path
) -> None:
    steps = [[s.tool, dict(s.args)] for s in Episode.make(AD, 0).instance.spec.solution]
    async with fleet_process(tmp_path) as (proc, address), MetasreClient(address) as owner:
        first = await owner.create_session(AD, seed=0)
        async with owner.agent(first.id, first.tokens["agent"]) as agent:
            for tool, args in steps:
                await agent.call(tool, args)
        uninterrupted = (await owner.get_grade(first.id))["grade"]
        handle = await owner.create_session(AD, seed=0)
        client = await asyncio.create_subprocess_exec(
            node, "-e", RESUMING, address, owner.owner_token, handle.id,
            handle.tokens["agent"], json.dumps(steps),
            cwd=ROOT, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert client.stdin is not None and client.stderr is not None
        try:
            line = await asyncio.wait_for(client.stderr.readline(), TIMEOUT)
            assert line == b"halfway\n", line
            os.kill(_shard_on(proc.pid, handle.endpoint), signal.SIGKILL)
            client.stdin.write(b"go\n")
            await client.stdin.drain()
            out, err = await asyncio.wait_for(client.communicate(), TIMEOUT)
        finally:
            if client.returncode is None:
                client.kill()
                await client.wait()
        answer = json.loads(out or b"{}")
        assert "grade" in answer, (answer, err.decode()[-2000:])
        assert answer["grade"]["final"] and answer["grade"]["resolved"]
        assert answer["grade"]["total"] == uninterrupted["total"]
        assert answer["grade"]["resolved"] == uninterrupted.get("resolved", False)
