"""The Node.js agent against a real server: it solves incidents and plays beside a Python agent."""

import asyncio

import pytest

from metasre.agents import EpisodeOverError, MetasreClient
from metasre.agents.client import CallResult
from metasre.simulator import resolve

from .conftest import NodeAgent, NodeRun, expert_grade, run_node

AD = "meta-sre/ad-ranking-crash-v2"
PAY = "meta-sre/payment-bad-deploy-v2"


CODE_FIX = [
    "read_logs",
    "describe_service",
    "git_log",
    "git_show",
    "edit_lines",
    "run_tests",
    "submit_report",
]


@pytest.mark.parametrize(
    ("scenario", "seed", "tools"),
    [
        (AD, 0, CODE_FIX),
        (AD, 7, CODE_FIX),
        (PAY, 0, ["read_logs", "describe_service", "rollback_deployment", "submit_report"]),
        (PAY, 7, ["read_logs", "describe_service", "rollback_deployment", "submit_report"]),
    ],
)
async def test_the_node_agent_grades_at_least_as_well_as_the_python_expert(
    node, server, scenario, seed, tools
):
    floor = expert_grade(scenario, seed)
    run = await run_node(
        node,
        *("--target", server.address, "--scenario", scenario, "--seed", seed),
        *("--min-grade", floor),
    )
    assert run.returncode == 0, run.stderr
    out = run.outcome
    assert (out["scenario_id"], out["seed"]) == (scenario, seed)
    assert [c["tool"] for c in out["calls"]] == tools
    assert all(c["ok"] for c in out["calls"])
    assert out["phase"] == "EPISODE_PHASE_TERMINATED"
    assert out["grade"]["resolved"] and out["grade"]["total"] >= floor, (out, floor)
    assert out["passed"] and out["min_grade"] == pytest.approx(floor)
    # the Node client owns the session it created: GetGrade with its owner token answers
    assert out["owner_grade"] == pytest.approx(out["grade"]["total"])


async def test_the_node_agent_reads_the_seeds_evidence(node, server):
    # The bad release differs by seed; the plan must follow what the server showed, and match
    # the scenario's reference report.
    plans = {}
    for seed in (0, 3, 6):
        run = await run_node(node, "--target", server.address, "--scenario", PAY, "--seed", seed)
        assert run.returncode == 0, run.stderr
        plans[seed] = run.outcome["plan"]["location"]
        reference = resolve(PAY).instance(seed).spec.solution[-1].args
        assert plans[seed] == reference["root_cause_location"]
    assert len(set(plans.values())) == 3, plans


async def test_the_node_agent_exits_non_zero_below_the_minimum_grade(node, server):
    run = await run_node(
        node, "--target", server.address, "--scenario", PAY, "--seed", 3, "--min-grade", 1.5
    )
    assert run.returncode == 1, run.stderr
    assert run.outcome["passed"] is False and run.outcome["grade"]["total"] < 1.5
    assert any(e["event"] == "below_min_grade" for e in run.events)


async def test_the_node_agent_says_what_is_wrong_with_its_arguments(node, server):
    run = await run_node(node, "--target", server.address)
    assert run.returncode == 2 and "usage:" in run.stderr
    refused = await run_node(node, "--target", server.address, "--scenario", "no-such-incident")
    assert refused.returncode == 3
    assert refused.events[-1]["code"] == "NOT_FOUND", refused.stderr


async def test_a_node_agent_and_a_python_agent_play_one_session_as_teammates(node, server):
    async with MetasreClient(server.address) as client:
        session = await client.create_session(
            AD, seed=2, seats=[("py", "scout"), ("node", "fixer")], turn_policy="FREE_FOR_ALL"
        )
        async with client.agent(session.id, session.tokens["py"]) as py:
            fixer = NodeAgent(
                node,
                ["--target", server.address, "--session", session.id, "--wait-teammate-calls", 3],
                env={"METASRE_JOIN_TOKEN": session.tokens["node"]},
            )
            await fixer.start()
            joined = await fixer.next_event("joined")
            assert joined["agent_id"] == "node"
            # The Python scout investigates and hands over; the Node fixer hears it all.
            assert (await py.call("check_dependencies")).tick == 1
            assert (await py.call("get_alerts")).tick == 2
            await py.call("send_message", {"text": "ad_ranking is down; over to you", "to": ["*"]})
            run = await fixer.finish()
            assert run.returncode == 0, run.stderr
            while py.inbox.episode_end is None:
                await py.next_news(py.news, 10)

    out = run.outcome
    # The Node side heard the Python seat's calls (and its message), in tick order.
    assert [(h["tick"], h["agent_id"], h["tool"]) for h in out["heard"]] == [
        (1, "py", "check_dependencies"),
        (2, "py", "get_alerts"),
        (3, "py", "send_message"),
    ]
    assert out["messages"] == [{"from_agent_id": "py", "text": "ad_ranking is down; over to you"}]
    # The Python side heard every call of the Node seat, with the ticks Node got for them.
    heard_by_py = [(a["tick"], a["tool"]) for a in py.inbox.applied if a["agent_id"] == "node"]
    assert heard_by_py == [(c["tick"], c["tool"]) for c in out["calls"]]
    assert heard_by_py[0][0] == 4 and heard_by_py[-1][1] == "submit_report"
    # One team, one grade: both sides saw the same end.
    assert py.inbox.episode_end["grade"]["total"] == pytest.approx(out["grade"]["total"])
    assert out["grade"]["resolved"] and set(out["agent_rewards"]) == {"py", "node"}


async def test_the_mixed_session_runs_the_node_agent_concurrently_with_python_calls(node, server):
    # FREE_FOR_ALL: both seats call at once; the log orders them and each hears the other.
    async with MetasreClient(server.address) as client:
        session = await client.create_session(PAY, seed=5, seats=["py", "node"])
        async with client.agent(session.id, session.tokens["py"]) as py:
            # A join token may start with "-": give it with "=" (or in METASRE_JOIN_TOKEN).
            token = session.tokens["node"]
            fixer = NodeAgent(
                node, ["--target", server.address, "--session", session.id, f"--token={token}"]
            )
            await fixer.start()
            await fixer.next_event("joined")
            node_run, *py_results = await asyncio.gather(
                fixer.finish(), *(py.call("get_alerts") for _ in range(3)), return_exceptions=True
            )
            while py.inbox.episode_end is None:
                await py.next_news(py.news, 10)
    assert isinstance(node_run, NodeRun), node_run
    assert node_run.returncode == 0, node_run.stderr
    # A scout call that lost the race with the report is refused (episode over), not applied.
    applied = [r for r in py_results if isinstance(r, CallResult)]
    refused = [r for r in py_results if not isinstance(r, CallResult)]
    assert all(isinstance(r, EpisodeOverError) for r in refused), refused
    py_ticks = [r.tick for r in applied]
    node_ticks = [c["tick"] for c in node_run.outcome["calls"]]
    assert sorted(py_ticks + node_ticks) == list(range(1, len(py_ticks) + len(node_ticks) + 1))
    assert [h["tick"] for h in node_run.outcome["heard"]] == sorted(py_ticks)
    assert [a["tick"] for a in py.inbox.applied if a["agent_id"] == "node"] == node_ticks
