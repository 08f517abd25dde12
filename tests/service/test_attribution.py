"""Per-agent rewards under each attribution mode add up as attribution.py documents."""

from __future__ import annotations

from typing import Any

import pytest

from metasre.simulator import Episode
from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2

from .conftest import PAY, create, pay_solution, struct

AGENTS = ("a", "b", "c")


def script() -> list[tuple[str, str, dict[str, Any]]]:
    rollback, report = pay_solution()
    return [
        ("a", "read_logs", {"service": "payment-service"}),
        ("b", "get_alerts", {}),
        ("c", *rollback),
        ("a", *report),
    ]


def local(calls: list[tuple[str, str, dict[str, Any]]]) -> tuple[dict[str, float], float]:
    """Shaping per agent and the grade, straight from the simulator."""
    episode = Episode.make(PAY, 0)
    shaping = dict.fromkeys(AGENTS, 0.0)
    for agent, tool, args in calls:
        step = episode.apply(agent, tool, args)
        shaping[agent] += sum(v for k, v in step.reward.components.items() if k != "grade")
    return shaping, episode.grade().total


async def play(channel, control, attribution: int, calls, team_spirit: float = 0.0):
    created = await create(control, AGENTS, attribution=attribution, team_spirit=team_spirit)
    sid = created.session.session_id
    tokens = {t.agent_id: t.join_token for t in created.tokens}
    stub = agent_pb2_grpc.AgentServiceStub(channel)
    for i, (agent, tool, args) in enumerate(calls):
        await stub.CallTool(
            agent_pb2.CallToolRequest(
                session_id=sid,
                token=tokens[agent],
                call=agent_pb2.ToolCall(call_id=str(i), tool=tool, args=struct(args)),
            )
        )
    graded = await control.GetGrade(control_pb2.GetGradeRequest(session_id=sid))
    trajectory = await control.GetTrajectory(control_pb2.GetTrajectoryRequest(session_id=sid))
    from_log = dict.fromkeys(AGENTS, 0.0)
    for event in trajectory.events:
        if event.WhichOneof("event") == "reward":
            from_log[event.reward.agent_id] += event.reward.total
    assert from_log == pytest.approx(dict(graded.agent_rewards), abs=1e-6)
    return graded


@pytest.mark.parametrize("mode", ["SHARED", "INDIVIDUAL", "MIXED"])
async def test_rewards_add_up_as_documented(channel, control, mode):
    alpha = 0.25
    calls = script()
    shaping, grade = local(calls)
    team = sum(shaping.values())
    graded = await play(
        channel,
        control,
        common_pb2.RewardAttribution.Value(f"REWARD_ATTRIBUTION_{mode}"),
        calls,
        team_spirit=alpha,
    )
    got = dict(graded.agent_rewards)
    assert graded.grade.total == pytest.approx(grade)
    n = len(AGENTS)
    for agent in AGENTS:
        own = shaping[agent] + grade / n
        expected = {
            "SHARED": team + grade,
            "INDIVIDUAL": own,
            "MIXED": (1 - alpha) * own + alpha * (team + grade) / n,
        }[mode]
        assert got[agent] == pytest.approx(expected, abs=1e-6)
    if mode != "SHARED":
        assert sum(got.values()) == pytest.approx(team + grade, abs=1e-6)


async def test_difference_is_the_grade_minus_the_grade_without_the_agent(channel, control):
    calls = script()
    _, grade = local(calls)
    graded = await play(channel, control, common_pb2.REWARD_ATTRIBUTION_DIFFERENCE, calls)
    for agent in AGENTS:
        _, without = local([c for c in calls if c[0] != agent])
        assert graded.agent_rewards[agent] == pytest.approx(grade - without, abs=1e-9)
    # c's rollback is the fix: without it nothing is resolved.
    assert graded.agent_rewards["c"] > 0.3


async def test_difference_gives_zero_to_an_agent_whose_calls_changed_nothing(channel, control):
    # No fix: the grade is the report's alone, which b's look at the alerts does not change.
    _, report = pay_solution()
    calls = [("b", "get_alerts", {}), ("c", "read_logs", {"service": "api-gateway"})]
    calls.append(("a", *report))
    graded = await play(channel, control, common_pb2.REWARD_ATTRIBUTION_DIFFERENCE, calls)
    assert graded.agent_rewards["b"] == 0.0
    assert graded.agent_rewards["c"] == 0.0
    assert graded.agent_rewards["a"] == pytest.approx(graded.grade.total)
    assert graded.grade.total > 0
