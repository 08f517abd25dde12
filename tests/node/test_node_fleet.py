"""The Node.js client on a fleet (`metasre serve --workers 2`): it follows sessions to their shard.

The agent talks only to the directory's address: a session it creates lives on the shard
CreateSession names, and a session someone else created is found through the directory's
refusal (NOT_FOUND / SESSION_ON_OTHER_SHARD, which names the holder).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from metasre.agents.client import MetasreClient
from metasre.cli.child_server import start_serve, stop_child

from .conftest import NodeAgent, expert_grade, run_node

AD = "meta-sre/ad-ranking-crash-v2"


@contextlib.asynccontextmanager
async def fleet(tmp_path: Path) -> AsyncIterator[str]:
    env = {k: v for k, v in os.environ.items() if k != "METASRE_ADMIN_TOKEN"}
    with (tmp_path / "fleet.log").open("wb") as log:
        proc, address = await start_serve(
            "--workers", "2", "--port", "0", "--store", str(tmp_path / "fleet.db"),
            stderr=log, cwd=tmp_path, env=env, timeout=120.0,
        )  # fmt: skip
        try:
            yield address
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
