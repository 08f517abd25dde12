"""OpenEnv's own client (`openenv` 0.10 from PyPI) plays META-SRE seats through the bridge.

The bridge and a real server run in this test's event loop; the synchronous clients run in
threads (each `.sync()` client has its own loop), as a trainer's rollout workers would.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from typing import Any

import pytest

pytest.importorskip("openenv", reason="openenv is not installed (pip install -e '.[dev]')")

import httpx
from openenv import GenericEnvClient

from metasre.agents.policies import ExpertPolicy, ToolReply
from metasre.simulator import resolve
from metasre.simulator.scenarios.splits import split_of

from .conftest import Bridge

SCENARIO = "payment-bad-deploy"


class OpenEnvCaller:
    """The scripted expert's ToolCaller over OpenEnv's synchronous client."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.rewards: list[float] = []
        self.last: Any = None

    def __call__(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        result = self.env.step({"type": "call_tool", "tool_name": tool, "arguments": dict(args)})
        self.last = result
        self.rewards.append(result.reward or 0.0)
        obs = result.observation
        error = obs.get("error")
        return ToolReply(
            error is None,
            str(obs.get("result") or (error or {}).get("message", "")),
            obs.get("data") or {},
            result.done,
            None if error is None else (error.get("code") or error.get("reason")),
        )


def _play_expert(url: str, reset: dict[str, Any]) -> tuple[Any, OpenEnvCaller]:
    with GenericEnvClient(base_url=url).sync() as env:
        first = env.reset(**reset)
        caller = OpenEnvCaller(env)
        ExpertPolicy().play(caller, first.observation["dashboard"])
        return first, caller


async def test_the_expert_resolves_an_incident_through_openenvs_client(bridge: Bridge) -> None:
    first, caller = await asyncio.to_thread(
        _play_expert, bridge.url, {"scenario": SCENARIO, "seed": 4}
    )
    assert first.done is False and first.reward == 0.0
    assert first.metadata["seed"] == 4 and first.observation["agent_id"] == "agent"
    end = caller.last
    assert end.done is True
    assert end.metadata["resolved"] is True and end.metadata["team_grade"] >= 0.9
    # The per-step rewards add up to the seat's total under the session's attribution, so a
    # trainer summing them (verifiers' openenv_reward) gets exactly the server's figure.
    assert math.isclose(sum(caller.rewards), end.metadata["reward_total"], abs_tol=1e-9)
    assert end.metadata["agent_rewards"] == {"agent": end.metadata["reward_total"]}
    assert {"efficiency", "sla"} <= {c["name"] for c in end.metadata["grade"]["components"]}


async def test_two_seats_of_one_session_on_two_websockets(bridge: Bridge) -> None:
    lead = GenericEnvClient(base_url=bridge.url).sync()
    try:
        first = await asyncio.to_thread(
            lead.reset, scenario=SCENARIO, seed=5, seats=["lead", "scribe"], reward_mode="SPARSE"
        )
        tokens = first.metadata["tokens"]
        assert set(tokens) == {"scribe"}  # the creator's own seat is taken; it hands the rest
        async with GenericEnvClient(base_url=bridge.url) as scribe:
            session_id = first.observation["session_id"]
            joined = await scribe.reset(session_id=session_id, token=tokens["scribe"])
            assert joined.observation["agent_id"] == "scribe"
            # A seat is not told its instance unless the owner asked (tell_seats_instance).
            assert joined.metadata["seed"] == 0 and "tokens" not in joined.metadata
            assert joined.observation["session_id"] == session_id
            said = await asyncio.to_thread(
                lead.step,
                {
                    "type": "call_tool",
                    "tool_name": "send_message",
                    "arguments": {"text": "looking at order-service", "to": ["scribe"]},
                },
            )
            assert said.reward == 0.0  # SPARSE: nothing before the end
            heard = await scribe.step(
                {"type": "call_tool", "tool_name": "get_alerts", "arguments": {}}
            )
            assert [m["text"] for m in heard.observation["messages"]] == [
                "looking at order-service"
            ]
            state = await scribe.state()
            assert state["episode_id"] == session_id
            assert state["step_count"] == 1 and state["agent_id"] == "scribe"
            # The lead plays the rest with the scripted expert and ends the episode.
            caller = OpenEnvCaller(lead)
            await asyncio.to_thread(ExpertPolicy().play, caller, first.observation["dashboard"])
            assert caller.last.done is True and caller.last.metadata["resolved"] is True
            # The scribe's next step is the end, with the grade: no error frame, which
            # OpenEnv's client would raise.
            end = await scribe.step(
                {"type": "call_tool", "tool_name": "get_alerts", "arguments": {}}
            )
            assert end.done is True and end.metadata["resolved"] is True
            assert end.reward == end.metadata["agent_rewards"]["scribe"]
            again = await scribe.step({"type": "call_tool", "tool_name": "get_alerts"})
            assert again.done is True and again.reward == end.reward
            assert math.isclose(
                sum(caller.rewards), end.metadata["agent_rewards"]["lead"], abs_tol=1e-9
            )
    finally:
        await asyncio.to_thread(lead.close)


async def test_the_verifiers_sequence_schema_list_tools_before_reset_then_tools(
    bridge: Bridge,
) -> None:
    """What verifiers' OpenEnvTaskset does (verifiers 0.4.0, v1/tasksets/openenv/taskset.py)."""
    async with GenericEnvClient(base_url=bridge.url) as client:
        async with httpx.AsyncClient(timeout=10) as http:
            response = await http.get(f"{bridge.url}/schema")
            response.raise_for_status()
        action_schema = response.json()["action"]
        assert action_schema["title"] == "CallToolAction"
        listed = await client.step({"type": "list_tools"})
        tools = {t["name"]: t for t in listed.observation["tools"]}
        assert tools["read_logs"]["input_schema"]["type"] == "object"
        # An evaluation draws from the test split: no structure a trainer saw.
        result = await client.reset(scenario=SCENARIO, split="test")
        assert result.metadata["split"] == "test"
        assert split_of(resolve(SCENARIO), result.metadata["seed"]) == "test"
        total = 0.0
        for name, args in (("get_alerts", {}), ("read_logs", {"service": "order-service"})):
            result = await client.step({"type": "call_tool", "tool_name": name, "arguments": args})
            total += result.reward or 0.0
            assert result.observation["error"] is None, result.observation
        assert total < 0  # two steps' cost, no fix yet (DENSE shaping)


async def test_openenv_validate_passes_against_the_running_bridge(bridge: Bridge) -> None:
    """`openenv validate --url URL` is this function and a printout of its report; its CLI
    takes ~18 s to start on two busy cores (typer, gradio), the function ~1 s to import."""
    from openenv.cli._validation import validate_running_environment

    report = await asyncio.to_thread(validate_running_environment, bridge.url, 10.0)
    failed = [c for c in report["criteria"] if not c["passed"]]
    assert report["passed"] is True, failed
    assert report["standard_profile"] == "openenv-http/1.x"
    assert report["mode"] == "production"  # WebSocket sessions, no stateless /reset
