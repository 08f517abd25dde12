"""The Gymnasium adapter against a real server on loopback, checked by Gymnasium's own checker.

`check_env` samples the action space, whose samples are well-formed looks half the time, so
the checker plays real calls (and real malformed text) through the server. The expert's
episode replayed through the env must be the same episode: the same grade, and rewards that
add up to what the server attributed.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from metasre.agents import ClientError
from metasre.agents.env_spaces import CHARSET, FEATURES, escape, parse_action
from metasre.agents.gym_env import MetasreEnv, MetasreVectorEnv
from metasre.agents.policies import ExpertPolicy
from metasre.agents.sync import SyncClient, WireCaller

PAY = "meta-sre/payment-bad-deploy-v2"


async def test_gymnasiums_env_checker_passes_against_a_real_server(server):
    def check() -> None:
        env = MetasreEnv(server.address, scenario=PAY)
        try:
            check_env(env, skip_render_check=True)
        finally:
            env.close()

    await asyncio.to_thread(check)


def _expert_episode(address: str, scenario: str, seed: int) -> dict[str, Any]:
    """The scripted expert's calls, grade and reward in a session of its own, over the SDK."""
    with SyncClient(address) as client:
        session = client.create_session(scenario, seed=seed, seats=["agent"])
        agent = client.agent(session.id, session.tokens["agent"])
        ExpertPolicy().play(WireCaller(agent), agent.observation)
        agent.close()
        events = client.get_trajectory(session.id)
        end = next(e["ended"] for e in events if "ended" in e)
        calls = [e["applied"] for e in events if "applied" in e]
        return {
            "calls": [json.dumps({"tool": c["tool"], "args": c["args"]}) for c in calls],
            "grade": end["grade"]["total"],
            "reward": end["agent_rewards"]["agent"],
        }


@pytest.mark.parametrize(("scenario", "seed"), [(PAY, 3), ("meta-sre/disk-full-v1", 1)])
async def test_the_experts_episode_replayed_through_the_env_is_the_same_episode(
    server, scenario, seed
):
    def replay() -> None:
        expert = _expert_episode(server.address, scenario, seed)
        assert expert["grade"] >= 0.9
        env = MetasreEnv(server.address, scenario=scenario)
        try:
            obs, info = env.reset(options={"seed": seed})
            assert info["seed"] == seed and info["scenario_id"] == scenario
            assert env.observation_space.contains(obs)
            rewards = []
            for i, action in enumerate(expert["calls"]):
                obs, reward, terminated, truncated, info = env.step(action)
                assert env.observation_space.contains(obs)
                assert obs["observation"][FEATURES.index("last_call_ok")] == 1.0
                rewards.append(float(reward))
                last = i == len(expert["calls"]) - 1
                assert (terminated, truncated) == (last, False), (i, info)
            assert info["grade"] == pytest.approx(expert["grade"])
            assert info["resolved"] is True
            # Every reward the server attributed reached the seat, in the steps that earned it.
            assert sum(rewards) == pytest.approx(expert["reward"], abs=1e-6)
            assert info["episode_reward"] == pytest.approx(expert["reward"], abs=1e-9)
            with pytest.raises(RuntimeError, match="reset"):
                env.step(expert["calls"][0])
        finally:
            env.close()

    await asyncio.to_thread(replay)


MALFORMED = [
    ("read the logs please", "not JSON"),
    ('["read_logs", {}]', "not an object"),
    ('{"args": {}}', "names no tool"),
    ('{"tool": "read_logs", "args": [1, 2]}', "must be a JSON object"),
    ('{"tool": "read_logs", "args": {}, "reward": 1}', "unknown keys reward"),
    (json.dumps({"name": "read_logs", "arguments": '{"service": '}), "arguments are not JSON"),
    ('{"tool": "drop_database", "args": {}}', "UNKNOWN_TOOL"),
    ('{"tool": "read_logs", "args": {"service": 7, "lines": "many"}}', "INVALID_ARGUMENTS"),
    ('{"tool": "view_file", "args": {"path": "../../etc/passwd"}}', ""),
    (12345, "not text"),
]


async def test_malformed_actions_are_error_observations_and_never_steps_of_the_episode(server):
    def play() -> None:
        env = MetasreEnv(server.address, scenario=PAY, max_actions=len(MALFORMED) + 2)
        try:
            env.reset(seed=5)
            budget = None
            for action, said in MALFORMED:
                obs, reward, terminated, truncated, info = env.step(action)  # type: ignore[arg-type]
                assert said in obs["text"], (action, obs["text"])
                assert not terminated and not truncated
                assert env.observation_space.contains(obs)
                steps_left = obs["observation"][FEATURES.index("steps_left")]
                if info["ok"] is False and info["tick"] == 0:  # refused: nothing was applied
                    assert obs["observation"][FEATURES.index("last_call_ok")] == 0.0
                    assert reward == 0.0
                budget = steps_left if budget is None else budget
            # A well-formed call in the chat-completions shape is applied.
            obs, _, _, _, info = env.step('{"name": "get_alerts", "arguments": "{}"}')
            assert info["ok"] is True and info["tick"] >= 1
            # The action limit truncates the episode here and frees the session on the server.
            session_id = env.session_id
            obs, _, terminated, truncated, info = env.step('{"tool": "get_alerts"}')
            assert (terminated, truncated) == (False, True)
            assert info["phase"] == "ACTION_LIMIT" and env.session_id == ""
            assert _closed(env.client, session_id)
        finally:
            env.close()

    await asyncio.to_thread(play)


def _closed(client: SyncClient, session_id: str) -> bool:
    try:
        return bool(client.get_session(session_id).get("closed"))
    except ClientError as exc:
        return exc.code == "NOT_FOUND"


def test_text_is_escaped_to_the_declared_charset_and_cut_to_its_length():
    text = "café ✓ — \U0001d518 \x00\x1b ok"
    out = escape(text + "\n")
    assert set(out) <= set(CHARSET)
    assert out == json.dumps(text)[1:-1] + "\n"  # JSON's escapes; newlines stay newlines
    long = escape("x" * 50_000, 1000)
    assert len(long) <= 1000 and long.endswith("more characters cut]")
    assert parse_action('{"tool": "get_alerts"}') == ("get_alerts", {})


async def test_a_vector_env_plays_many_sessions_at_once_over_one_client(server):
    def play() -> None:
        envs = MetasreVectorEnv(server.address, 3, scenario=PAY)
        try:
            obs, infos = envs.reset(seed=11)
            assert obs["observation"].shape == (3, len(FEATURES))
            assert len(set(infos["seed"])) == 3  # three episodes, three seeds
            ids = {e.session_id for e in envs.envs}  # type: ignore[attr-defined]
            assert len(ids) == 3 and "" not in ids
            actions = ('{"tool": "get_alerts"}', "oops", '{"tool": "git_log"}')
            obs, rewards, terminated, truncated, infos = envs.step(actions)
            assert list(infos["ok"]) == [True, False, True]
            assert not terminated.any() and not truncated.any()
            assert rewards.dtype == np.float64 and rewards[1] == 0.0
        finally:
            envs.close()

    await asyncio.to_thread(play)


TRAINING_EXTRAS = {
    # distribution name -> the module it installs
    "gymnasium": "gymnasium",
    "pettingzoo": "pettingzoo",
    "numpy": "numpy",
    "skyrl-gym": "skyrl_gym",
    "transformers": "transformers",
    "torch": "torch",
    "datasets": "datasets",
    "pyarrow": "pyarrow",
    "pandas": "pandas",
    "atif": "atif",
    "openai": "openai",
}
"""What the gym and skyrl extras and the export tests' consumers bring: never the core's."""


def test_the_core_package_and_the_command_line_import_none_of_the_training_extras():
    # Installing metasre without extras must work: nothing outside the adapters needs them,
    # the exports and the TRL class included (they write and read plain data).
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    core = {re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0] for r in project["project"]["dependencies"]}
    assert not core & set(TRAINING_EXTRAS)
    assert project["project"]["optional-dependencies"]["gym"]
    modules = tuple(TRAINING_EXTRAS.values())
    code = (
        "import sys, metasre.agents, metasre.agents.sync, metasre.cli.main\n"
        "import metasre.cli.seat_exports, metasre.agents.dialects, metasre.agents.trl_env\n"
        f"print(sorted(m for m in {modules!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
