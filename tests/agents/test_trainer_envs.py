"""The trainer adapters against a real server on loopback, read by the trainers' own code.

TRL's `environment_factory`: its tools found the way TRL finds them (`inspect.getmembers` on
the class) and their schemas extracted by `transformers.utils.get_json_schema`, which TRL uses,
must be the server's. SkyRL: `skyrl_gym.make` builds the registered env, and the scripted
expert's episode played through it (as `<tool_call>` text) is the same episode.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import pytest
import skyrl_gym
from transformers.utils import get_json_schema

from metasre.agents.skyrl_env import register
from metasre.agents.trl_env import tool_names, trl_environment

from .test_gym_env import PAY, _expert_episode


def _expected(spec: dict[str, Any]) -> dict[str, Any]:
    """What get_json_schema should write for a server schema property: types, enum."""
    options = [s for s in spec.get("anyOf") or [spec] if s.get("type") != "null"]
    types = [s["type"] for s in options]
    out: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
    if "enum" in options[0]:
        out["enum"] = options[0]["enum"]
    return out


async def test_trls_schema_extraction_reads_every_tool_as_the_server_declares_it(server):
    def check() -> None:
        env_class = trl_environment(server.address, scenario=PAY)
        instance = env_class()  # TRL's factory takes no argument
        functions = dict(inspect.getmembers(type(instance), predicate=inspect.isfunction))
        assert "reset" in functions and "get_reward" in functions
        served = {t["name"]: t for t in instance._session.client.list_tools()}
        assert sorted(tool_names(env_class)) == sorted(served)
        for name in tool_names(env_class):
            schema = get_json_schema(getattr(instance, name))["function"]
            tool = served[name]
            assert schema["name"] == name
            assert schema["description"] == " ".join(tool["description"].split())
            declared = tool["input_schema"]
            params = schema["parameters"]
            assert set(params["properties"]) == set(declared.get("properties", {}))
            assert set(params.get("required", ())) == set(declared.get("required", ()))
            for prop, spec in declared.get("properties", {}).items():
                got = params["properties"][prop]
                assert {k: got[k] for k in _expected(spec)} == _expected(spec), (name, prop)
                assert got.get("nullable", False) == (prop not in declared.get("required", ()))

    await asyncio.to_thread(check)


async def test_the_experts_episode_through_the_trl_environment(server):
    def play() -> None:
        expert = _expert_episode(server.address, PAY, 3)
        env = trl_environment(server.address)()
        page = env.reset(scenario=PAY, seed=3, prompt="ignored dataset column")
        assert page.startswith("[P1]")
        for call in expert["calls"]:
            c = json.loads(call)
            text = getattr(env, c["tool"])(**c["args"])
            assert isinstance(text, str) and text
        assert env.get_reward() == pytest.approx(expert["reward"], abs=1e-6)
        with pytest.raises(ValueError, match="episode is over"):
            env.get_alerts()
        # A refused call is text for the model, not an exception.
        env.reset(scenario=PAY, seed=3)
        assert "INVALID_ARGUMENTS" in env.read_logs(service="payment-service", lines=10**9)
        misspelt = env.read_logs(servise="payment-service")  # the server names the fields
        assert "servise" in misspelt and "service" in misspelt

    await asyncio.to_thread(play)


async def test_skyrl_gym_makes_the_env_and_the_expert_plays_it_to_the_same_grade(server):
    def play() -> None:
        expert = _expert_episode(server.address, PAY, 3)
        register()
        register()  # twice is harmless
        env = skyrl_gym.make(
            "metasre",
            env_config={"target": server.address},
            extras={"scenario_id": PAY, "seed": 3, "max_turns": 40},
        )
        prompt, _ = env.init([{"role": "system", "content": "You are on call."}])
        assert prompt[-1]["role"] == "user" and prompt[-1]["content"].startswith("[P1]")
        out = env.step("I will look around first, no tool call yet.")
        assert "not JSON" in out["observations"][0]["content"] and not out["done"]
        rewards = [out["reward"]]
        for i, call in enumerate(expert["calls"]):
            c = json.loads(call)
            text = json.dumps({"name": c["tool"], "arguments": c["args"]})
            out = env.step(f"Next I check.\n<tool_call>\n{text}\n</tool_call>")
            rewards.append(out["reward"])
            assert out["done"] == (i == len(expert["calls"]) - 1)
        assert out["metadata"]["grade"] == pytest.approx(expert["grade"])
        assert sum(rewards) == pytest.approx(expert["reward"], abs=1e-6)
        assert env.get_metrics()["episode_reward"] == pytest.approx(expert["reward"], abs=1e-6)
        env.close()
        with pytest.raises(ValueError, match="target"):
            skyrl_gym.make("metasre", env_config={}, extras={})

    await asyncio.to_thread(play)
