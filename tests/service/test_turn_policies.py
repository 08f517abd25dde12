"""Three agents in one session under each turn policy, each seeing the same applied order."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from metasre.v1 import common_pb2

from .conftest import AgentClient, create, details, pay_solution

AGENTS = ("a", "b", "c")


def plan() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Two calls each; then c rolls back and a files the report."""
    rollback, report = pay_solution()
    return {
        "a": [("get_alerts", {}), ("read_logs", {"service": "api-gateway"}), report],
        "b": [("read_logs", {"service": "payment-service"}), ("check_dependencies", {})],
        "c": [("query_metrics", {"service": "payment-service", "metric": "error_rate"}), rollback],
    }


async def join_all(channel, control, **kwargs) -> tuple[str, dict[str, AgentClient]]:
    created = await create(control, AGENTS, **kwargs)
    sid = created.session.session_id
    clients = {}
    for token in created.tokens:
        client = AgentClient(channel)
        await client.join(sid, token.join_token)
        clients[token.agent_id] = client
    return sid, clients


def assert_same_order(clients: dict[str, AgentClient]) -> list[tuple[int, str, str]]:
    orders = [c.applied_order() for c in clients.values()]
    first = orders[0]
    assert [t for t, _, _ in first] == list(range(1, len(first) + 1))
    for other in orders[1:]:
        assert other == first
    return first


async def test_free_for_all_applies_in_arrival_order_and_all_agents_agree(channel, control):
    _, clients = await join_all(channel, control)
    steps = plan()

    async def play(agent: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
        client = clients[agent]
        for tool, args in calls:
            if agent == "a" and tool == "submit_report":
                # The report ends the episode: file it once everyone else is done.
                await others_done.wait()
            reply = await client.result_or_error(client.tool(tool, args))
            assert reply.WhichOneof("response") == "result", reply

    others_done = asyncio.Event()

    async def others() -> None:
        await asyncio.gather(play("b", steps["b"]), play("c", steps["c"]))
        others_done.set()

    await asyncio.gather(play("a", steps["a"]), others())
    ends = [await c.until_end() for c in clients.values()]
    order = assert_same_order(clients)
    assert len(order) == 7
    assert {e.episode_end.grade.total for e in ends} == {ends[0].episode_end.grade.total}
    assert ends[0].episode_end.grade.resolved
    for c in clients.values():
        c.close()


async def test_round_robin_takes_turns_in_seat_order(channel, control):
    _, clients = await join_all(channel, control, policy=common_pb2.TURN_POLICY_ROUND_ROBIN)
    rollback, report = pay_solution()
    # Turn order a, b, c, a, b, c: c rolls back in its second turn, then a reports.
    script = {
        "a": [("get_alerts", {}), ("read_logs", {"service": "api-gateway"}), report],
        "b": [("read_logs", {"service": "payment-service"}), ("check_dependencies", {})],
        "c": [("query_metrics", {"service": "payment-service", "metric": "error_rate"}), rollback],
    }

    # Out of turn: b calls while a holds the turn; refused in-band, the stream stays usable.
    refused = await clients["b"].result_or_error(clients["b"].tool("get_alerts"))
    assert refused.error.code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    assert details(refused.error)[0].reason == "NOT_YOUR_TURN"

    async def play(agent: str) -> None:
        client = clients[agent]
        for tool, args in script[agent]:
            await client.expect("turn", lambda m: m.turn.agent_id == agent)
            reply = await client.result_or_error(client.tool(tool, args))
            assert reply.WhichOneof("response") == "result", reply

    await asyncio.gather(*(play(a) for a in AGENTS))
    for c in clients.values():
        await c.until_end()
    order = assert_same_order(clients)
    assert [agent for _, agent, _ in order] == ["a", "b", "c", "a", "b", "c", "a"]
    for c in clients.values():
        c.close()


async def test_simultaneous_rounds_resolve_in_seat_order(channel, control):
    _, clients = await join_all(channel, control, policy=common_pb2.TURN_POLICY_SIMULTANEOUS)
    rollback, report = pay_solution()
    rounds = [
        {"c": ("get_alerts", {}), "b": ("check_dependencies", {}), "a": ("get_alerts", {})},
        {
            "b": ("read_logs", {"service": "payment-service"}),
            "c": rollback,
            "a": ("get_alerts", {}),
        },
        # a files the report first (seat order): the episode ends before b and c act.
        {"b": ("get_alerts", {}), "c": ("get_alerts", {}), "a": report},
    ]
    for number, calls in enumerate(rounds, start=1):
        for agent in calls:
            await clients[agent].expect("turn", lambda m, n=number: m.turn.round == n)
        # Sent in reverse seat order: the round still resolves a, b, c.
        ids = {agent: clients[agent].tool(*calls[agent]) for agent in ("c", "b", "a")}
        for agent, call_id in ids.items():
            reply = await clients[agent].result_or_error(call_id)
            if number == 3 and agent != "a":
                assert details(reply.error)[0].reason == "EPISODE_OVER"
            else:
                assert reply.WhichOneof("response") == "result", reply
    for c in clients.values():
        await c.until_end()
    order = assert_same_order(clients)
    assert [agent for _, agent, _ in order] == ["a", "b", "c", "a", "b", "c", "a"]
    for c in clients.values():
        c.close()


async def test_simultaneous_round_times_out_an_absent_agent(channel, control):
    created = await create(
        control, AGENTS, policy=common_pb2.TURN_POLICY_SIMULTANEOUS, turn_timeout=0.3
    )
    sid = created.session.session_id
    a, b = AgentClient(channel), AgentClient(channel)
    await a.join(sid, created.tokens[0].join_token)
    await b.join(sid, created.tokens[1].join_token)
    # c holds a seat but never joins: the round closes after the timeout with a and b.
    ca = a.tool("get_alerts")
    cb = b.tool("check_dependencies")
    again = await b.result_or_error(b.tool("get_alerts"))
    assert details(again.error)[0].reason == "NOT_YOUR_TURN"
    ra, rb = await a.result_or_error(ca), await b.result_or_error(cb)
    assert (ra.result.tick, rb.result.tick) == (1, 2)
    round_two = await a.expect("turn", lambda m: m.turn.round == 2)
    assert round_two.turn.tick == 2
    a.close()
    b.close()


@pytest.mark.parametrize("policy", ["FREE_FOR_ALL", "ROUND_ROBIN", "SIMULTANEOUS"])
async def test_get_session_reports_the_policy(control, policy):
    value = common_pb2.TurnPolicy.Value(f"TURN_POLICY_{policy}")
    created = await create(control, AGENTS, policy=value)
    assert created.session.turn_policy == value
    assert [s.agent_id for s in created.session.seats] == list(AGENTS)
