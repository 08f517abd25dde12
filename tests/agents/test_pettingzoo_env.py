"""The PettingZoo adapter against a real server on loopback, checked by PettingZoo's own tests.

`parallel_api_test`, `parallel_seed_test`, `api_test` on the AEC view made by PettingZoo's
`parallel_to_aec`, and `seed_test`: their sampled actions are well-formed looks half the time,
so they play real episodes to their end. A restricted seat's observations never show what its
view hides, and the rewards of an episode add up, per seat, to what the server attributed.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

from metasre.agents.env_spaces import FEATURES
from metasre.agents.pettingzoo_env import MetasreParallelEnv, aec_env

PAY = "meta-sre/payment-bad-deploy-v2"
SPLIT = "meta-sre/split-evidence-v2"
# api_test's advice for Box/Discrete spaces and array observations: text needs Dict and Text.
ADVICE = [
    "ignore:Observation space for each agent probably should be:UserWarning",
    "ignore:Action space for each agent probably should be:UserWarning",
    "ignore:Observation is not a NumPy array:UserWarning",
]


def _ended_by_the_server(env: MetasreParallelEnv) -> dict[str, Any]:
    """The last episode's end, from the server's log: the checker played it to its end."""
    events = env.client.get_trajectory(env.session_id)
    assert sum("applied" in e for e in events) >= 2  # real calls, not only malformed text
    return next(e["ended"] for e in events if "ended" in e)


async def test_pettingzoos_parallel_api_test_passes(server):
    def check() -> None:
        env = MetasreParallelEnv(server.address, scenario=PAY, seats=["a", "b", "c"])
        try:
            parallel_api_test(env, num_cycles=100)
            assert _ended_by_the_server(env)["phase"] == "EPISODE_PHASE_TRUNCATED"
        finally:
            env.close()

    await asyncio.to_thread(check)


async def test_pettingzoos_parallel_seed_test_passes(server):
    await asyncio.to_thread(
        parallel_seed_test, lambda: MetasreParallelEnv(server.address, scenario=PAY)
    )


@pytest.mark.filterwarnings(*ADVICE)
async def test_pettingzoos_api_test_passes_on_the_aec_view(server):
    def check() -> None:
        env = aec_env(server.address, scenario=PAY)
        try:
            api_test(env, num_cycles=100)
        finally:
            env.close()

    await asyncio.to_thread(check)


async def test_pettingzoos_seed_test_passes_on_the_aec_view(server):
    await asyncio.to_thread(seed_test, lambda: aec_env(server.address, scenario=PAY))


def _call(tool: str, **args: Any) -> str:
    return json.dumps({"tool": tool, "args": args})


async def test_a_restricted_seat_never_sees_what_its_view_hides(server):
    seats = [("oncall", "app-oncall"), ("releases", "release-manager")]

    def play() -> None:
        env = MetasreParallelEnv(server.address, scenario=SPLIT, seats=seats)
        try:
            obs, infos = env.reset(options={"seed": 3})
            assert infos["oncall"]["role"] == "app-oncall"
            seen: dict[str, list[str]] = {"oncall": [obs["oncall"]["text"]], "releases": []}
            steps = [
                {"oncall": _call("get_events"), "releases": _call("get_events")},
                {"oncall": _call("check_dependencies"), "releases": _call("git_log")},
                {"oncall": _call("rollback_deployment", service="promo-service")},
                {"releases": _call("send_message", text="promo-service shipped v1.8.0")},
            ]
            for actions in steps:
                obs, _, _, _, infos = env.step(actions)
                for agent in obs:
                    seen[agent].append(obs[agent]["text"])
            oncall = "\n".join(seen["oncall"])
            releases = "\n".join(seen["releases"])
            assert "deployed promo-service" in releases  # the release train, in its view
            assert "deployed" not in oncall.replace("promo-service shipped v1.8.0", "")
            assert infos["oncall"]["error"] == "" and "OUTSIDE_VIEW" in seen["oncall"][3]
            # What crosses views is what a teammate says.
            assert "Message from releases: promo-service shipped v1.8.0" in seen["oncall"][4]
            assert obs["oncall"]["observation"][FEATURES.index("new_messages")] == 1.0
        finally:
            env.close()

    await asyncio.to_thread(play)


@pytest.mark.parametrize("attribution", ["SHARED", "INDIVIDUAL", "DIFFERENCE"])
async def test_each_seats_rewards_add_up_to_what_the_server_attributed(server, attribution):
    def play() -> None:
        env = MetasreParallelEnv(
            server.address, scenario=PAY, seats=["a", "b"], attribution=attribution
        )
        try:
            env.reset(options={"seed": 2})
            returns = {"a": 0.0, "b": 0.0}
            looks = [_call("get_alerts"), _call("read_logs", service="order-service"), "oops"]
            for i in range(30):
                actions = {a: looks[(i + j) % 3] for j, a in enumerate(env.agents)}
                if i == 4:
                    actions["b"] = _call("restart_service", service="order-service")
                _, rewards, terminated, truncated, infos = env.step(actions)
                for agent, reward in rewards.items():
                    returns[agent] += reward
                if not env.agents:
                    break
            assert all(truncated.values()) and not any(terminated.values())
            end = _ended_by_the_server(env)
            for agent in returns:
                assert returns[agent] == pytest.approx(end["agent_rewards"][agent], abs=1e-6)
                assert infos[agent]["grade"] == pytest.approx(end["grade"]["total"])
            if attribution == "INDIVIDUAL":  # b paid alone for its needless restart
                assert returns["b"] < returns["a"]
        finally:
            env.close()

    await asyncio.to_thread(play)


async def test_a_simultaneous_step_is_one_round_applied_in_seat_order(server):
    def play() -> None:
        env = MetasreParallelEnv(
            server.address, scenario=PAY, seats=["a", "b"], turn_policy="SIMULTANEOUS"
        )
        try:
            env.reset(seed=4)
            for _ in range(2):
                env.step({"b": _call("get_alerts"), "a": _call("git_log")})
            events = env.client.get_trajectory(env.session_id)
            applied = [
                (e["applied"]["round"], e["applied"]["agent_id"]) for e in events if "applied" in e
            ]
            assert applied == [(1, "a"), (1, "b"), (2, "a"), (2, "b")]
        finally:
            env.close()

    await asyncio.to_thread(play)


async def test_bad_settings_and_actions_for_absent_seats_are_clear_errors(server):
    def check() -> None:
        with pytest.raises(ValueError, match=r"ROUND_ROBIN.*FREE_FOR_ALL, SIMULTANEOUS"):
            MetasreParallelEnv(server.address, turn_policy="ROUND_ROBIN")
        with pytest.raises(ValueError, match="target"):
            MetasreParallelEnv()
        env = MetasreParallelEnv(server.address, scenario=PAY, seats=["a", "b"])
        try:
            env.reset(seed=0)
            with pytest.raises(ValueError, match=r"mallory.*playing are a, b"):
                env.step({"mallory": _call("get_alerts")})
        finally:
            env.close()

    await asyncio.to_thread(check)
