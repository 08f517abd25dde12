"""Reward modes per session: DENSE pays shaping as calls apply, SPARSE only the grade at the end."""

from __future__ import annotations

import json
import subprocess
import sys

import grpc
import pytest

from metasre.agents import MetasreClient
from metasre.v1 import common_pb2, control_pb2

from .conftest import PAY, TIMEOUT, create, pay_solution


@pytest.mark.parametrize("mode", ["DENSE", "SPARSE"])
async def test_a_sparse_session_pays_nothing_until_the_grade(server, mode: str) -> None:
    async with MetasreClient(server.address) as client:
        handle = await client.create_session(PAY, seed=0, seats=["a"], reward_mode=mode)
        rewards = []
        async with client.agent(handle.id, handle.tokens["a"]) as agent:
            for tool, args in pay_solution(0):
                result = await agent.call(tool, args)
                rewards.append(result.reward)
            end = agent.inbox.episode_end
            while end is None:
                await agent.next_news(agent.news, TIMEOUT)
                end = agent.inbox.episode_end
        graded = await client.get_grade(handle.id)
        events = [e async for e in _events(client, handle.id)]
    grade = graded["grade"]["total"]
    paid = [e for e in events if "reward" in e]
    if mode == "SPARSE":
        # no reward until the end, then exactly the grade
        assert not any(r and r.get("components") for r in rewards[:-1]), rewards
        assert [set(e["reward"]["components"]) for e in paid] == [{"grade"}]
        assert graded["agent_rewards"]["a"] == pytest.approx(grade)
    else:
        assert all(r is not None and "step_cost" in r["components"] for r in rewards[:-1])
        assert graded["agent_rewards"]["a"] != pytest.approx(grade)  # shaping on top


async def _events(client: MetasreClient, session_id: str):  # type: ignore[no-untyped-def]
    async for event in client.watch(session_id):
        yield event
        if "episode_end" in event or "ended" in event:
            return


async def test_the_mode_is_shown_and_checked(channel, control) -> None:
    created = await create(control, ("a",))
    info = await control.GetSession(
        control_pb2.GetSessionRequest(session_id=created.session.session_id)
    )
    assert info.session.reward_mode == common_pb2.REWARD_MODE_DENSE  # the documented default
    request = control_pb2.CreateSessionRequest(scenario_id=PAY, reward_mode=7)  # type: ignore[arg-type]
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await control.CreateSession(request)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "reward_mode" in err.value.details()


def test_the_rollout_command_plays_sparse_sessions() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", "rollout", "--agent", "expert",
         "--scenario", PAY, "--seeds", "0-1", "--reward-mode", "SPARSE", "--json",
         "--no-progress", "--no-store"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["total"]["graded"] == 2, report
