"""Per-agent rewards under each attribution mode add up as attribution.py documents."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metasre.service.core.attribution import Attribution, step_rewards
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


_AGENTS = ["a", "b", "c", "d"]


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=1, max_value=4).flatmap(
        lambda n: st.tuples(
            st.just(_AGENTS[:n]),
            st.dictionaries(
                st.sampled_from(_AGENTS[:n]),
                st.dictionaries(
                    st.sampled_from(["step_cost", "fault_cured", "fault_repaired", "hint"]),
                    st.floats(min_value=-1, max_value=1, allow_nan=False),
                    max_size=3,
                ),
                min_size=1,
            ),
            st.floats(min_value=0, max_value=1, allow_nan=False),
        )
    )
)
def test_every_mode_shares_a_calls_shaping_as_the_protos_promise(
    case: tuple[list[str], dict[str, dict[str, float]], float],
) -> None:
    """SHARED gives everyone the team's sum; INDIVIDUAL and MIXED split it exactly, whoever
    earned it (the caller, or an agent a repair paid back); DIFFERENCE pays no shaping."""
    agents, earned, alpha = case
    team = sum(sum(c.values()) for c in earned.values())
    shared = step_rewards(Attribution.SHARED, 0.0, agents, earned)
    assert set(shared) == set(agents)
    assert all(sum(c.values()) == pytest.approx(team) for c in shared.values())
    for mode, spirit in ((Attribution.INDIVIDUAL, 0.0), (Attribution.MIXED, alpha)):
        shares = step_rewards(mode, spirit, agents, earned)
        assert sum(sum(c.values()) for c in shares.values()) == pytest.approx(team, abs=1e-9)
    individual = step_rewards(Attribution.INDIVIDUAL, 0.0, agents, earned)
    for agent, components in earned.items():
        assert sum(individual.get(agent, {}).values()) == pytest.approx(sum(components.values()))
    assert step_rewards(Attribution.DIFFERENCE, 0.0, agents, earned) == {}


async def test_breaking_and_fixing_earns_no_seat_anything_over_the_wire(server) -> None:
    """Finding 4: under INDIVIDUAL, one seat scaled the root service down and another back up,
    over and over, and the fixer collected a cure each time. Now a cure after a seat's own
    break repays that seat: neither gains from the cycle."""
    from metasre.agents import MetasreClient
    from metasre.simulator import resolve

    oom = "meta-sre/user-service-oom-v2"
    family = resolve(oom)
    # a seed whose remedy is scaling; its faults (one or two) are all cured by the replicas
    seed = next(s for s in range(100) if family.spec(s).ground_truth.remediation == "scale_service")
    spec = family.spec(seed)
    need = next(c.replicas for c in spec.hidden.state_checks if c.replicas)
    root = spec.ground_truth.service
    up = {"service": root, "replicas": need}
    down = {"service": root, "replicas": 1}
    async with MetasreClient(server.address) as client:
        handle = await client.create_session(
            oom, seed=seed, seats=["fixer", "breaker"], attribution="INDIVIDUAL"
        )
        async with (
            client.agent(handle.id, handle.tokens["fixer"]) as fixer,
            client.agent(handle.id, handle.tokens["breaker"]) as breaker,
        ):
            await fixer.call("scale_service", up)
            for _ in range(5):
                await breaker.call("scale_service", down)
                await fixer.call("scale_service", up)
            await fixer.call("submit_report", dict(spec.solution[-1].args))
        graded = await client.get_grade(handle.id)
    grade = graded["grade"]["total"]
    shaping = {a: r - grade / 2 for a, r in graded["agent_rewards"].items()}
    # one cure's worth for the fixer (per fault), less its calls' costs; nothing for the
    # breaker but costs
    assert shaping["fixer"] <= 0.2 * len(spec.faults)
    assert shaping["breaker"] <= 0.0
    assert grade <= 0.3  # and the grade counts every needless operation


async def _line_of(agent: Any, path: str, needle: str) -> int:
    view = await agent.call("view_file", {"path": path})
    first = int(view.data["start_line"])
    return next(first + i for i, text in enumerate(view.data["lines"]) if needle in text)


RIDES = ["comments-at-the-top", "comments-right-above-the-fix", "a-comment-on-the-fixed-line"]


@pytest.mark.parametrize("ride", RIDES)
async def test_a_riders_insertions_earn_no_difference_credit(server, ride: str) -> None:
    """Finding 5: a rider put comment lines at the top of the file a teammate then fixed by
    line number; replayed without the rider, the fix landed on the wrong line, so the rider
    was credited the fix. Edits now replay by content, like a patch with fuzz: wherever the
    rider's harmless lines go (above the file, right above the fix, on the very line the fix
    replaces), the rider's credit is ~0 and the fixer's the whole grade."""
    from metasre.agents import MetasreClient

    ad = "meta-sre/ad-ranking-crash-v2"
    ranker = "ad_ranking/ranker.py"
    seed = 11  # a feature row read as an object on one line of ranker.py
    instance = Episode.make(ad, seed).instance
    assert instance.values["fault"]["file"] == ranker, "the family changed: pick another seed"
    solution = instance.spec.solution
    edit, report = dict(solution[0].args), dict(solution[-1].args)
    needle = str(instance.values["fault"]["bug"]).strip()
    async with MetasreClient(server.address) as client:
        handle = await client.create_session(
            ad, seed=seed, seats=["rider", "fixer"], attribution="DIFFERENCE"
        )
        async with (
            client.agent(handle.id, handle.tokens["rider"]) as rider,
            client.agent(handle.id, handle.tokens["fixer"]) as fixer,
        ):
            for n in range(8 if ride != "a-comment-on-the-fixed-line" else 1):
                target = (
                    1 if ride == "comments-at-the-top" else await _line_of(rider, ranker, needle)
                )
                if ride == "a-comment-on-the-fixed-line":
                    view = await rider.call(
                        "view_file", {"path": ranker, "start_line": target, "end_line": target}
                    )
                    text = f"{view.data['lines'][0]}  # reviewed"
                    change = {"action": "replace", "end_line": target, "content": text}
                else:
                    change = {"action": "insert", "content": f"# reviewed {n}"}
                await rider.call("edit_lines", {"path": ranker, "start_line": target, **change})
            line = await _line_of(fixer, ranker, needle)
            await fixer.call("edit_lines", {**edit, "start_line": line, "end_line": line})
            await fixer.call("submit_report", report)
        graded = await client.get_grade(handle.id)
    grade = graded["grade"]["total"]
    assert grade > 0.9
    assert abs(graded["agent_rewards"]["rider"]) < 0.05, graded["agent_rewards"]
    assert graded["agent_rewards"]["fixer"] > 0.8, graded["agent_rewards"]
