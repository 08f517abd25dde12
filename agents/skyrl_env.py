"""A SkyRL-gym `BaseTextEnv` over the wire: the model's text in, the tool's result out.

    import skyrl_gym
    from metasre.agents.skyrl_env import register

    register()                      # id "metasre"
    env = skyrl_gym.make(
        "metasre",
        env_config={"target": "127.0.0.1:50051"},
        extras={"scenario_id": "payment-bad-deploy", "seed": 3, "max_turns": 40},
    )
    prompt, info = env.init([{"role": "system", "content": "You are on call..."}])
    out = env.step('<tool_call>{"name": "get_alerts", "arguments": {}}</tool_call>')
    # out["observations"], out["reward"], out["done"], out["metadata"]

SkyRL builds one env per trajectory from its dataset row (`extras`: `scenario_id`, `seed`,
`max_turns`) and the generator's `env_config` (`target`, and optionally `scenario`,
`reward_mode`, `admin_token`). `init` opens the session and appends the page to the prompt as a
user turn. `step` takes the model's whole reply and plays the first tool call in it: a
`<tool_call>{...}</tool_call>` block (the Hermes and Qwen chat templates' form) or a reply that
is one JSON call; a reply with no call, or a call the server refuses, is answered with the
error text. The reward is the seat's reward over the step (shaping, and the grade as the
session attributes it when the episode ends); `done` when the report is filed, the step budget
runs out, or after `max_turns` replies. Needs the `skyrl` extra (skyrl-gym).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from skyrl_gym import register as skyrl_register
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
from skyrl_gym.envs.registration import registry

from .env_session import SessionSettings, SteppedSession
from .trl_env import shared_client

ENV_ID = "metasre"
"""The id `register()` gives the environment in skyrl_gym's registry."""
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def _setting(config: Any, key: str, default: Any = None) -> Any:
    """A key of SkyRL's env_config (an OmegaConf DictConfig or a plain mapping)."""
    if isinstance(config, Mapping) or hasattr(config, "get"):
        return config.get(key, default)
    return getattr(config, key, default)


class MetasreTextEnv(BaseTextEnv):
    """One seat of a META-SRE session as a SkyRL text environment; see the module docstring."""

    def __init__(self, env_config: Any, extras: Mapping[str, Any] | None = None) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # skyrl_gym leaves it unannotated
        extras = dict(extras or {})
        target = _setting(env_config, "target")
        if not target:
            raise ValueError("env_config needs the server's address: target='host:port'")
        self.scenario = str(
            extras.get("scenario_id") or _setting(env_config, "scenario") or "payment-bad-deploy"
        )
        self.seed = int(extras.get("seed") or 0)
        self.max_turns = int(extras.get("max_turns") or 40)
        settings = SessionSettings(
            seats=("agent",), reward_mode=str(_setting(env_config, "reward_mode", "DENSE"))
        )
        client = shared_client(str(target), _setting(env_config, "admin_token"))
        self.session = SteppedSession(client, settings, max_actions=self.max_turns)
        self.episode_reward = 0.0

    def init(self, prompt: list[dict[str, str]]) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """Open the session; the prompt with the page appended as a user turn."""
        observations, infos = self.session.reset(self.scenario, self.seed)
        self.turns, self.episode_reward = 0, 0.0
        page = str(observations["agent"]["text"])
        info = {"session_id": self.session.session_id, **infos["agent"]}
        return [*prompt, {"role": "user", "content": page}], info

    # BaseTextEnv's own return type, which skyrl_gym declares apart from its Env base's.
    def step(self, action: str) -> BaseTextEnvStepOutput:  # type: ignore[override]
        """Play the first tool call of the model's reply."""
        self.turns += 1
        found = _TOOL_CALL.search(action)
        call = found.group(1) if found else action.strip()
        out = self.session.step({"agent": call})
        reward = out.rewards["agent"]
        self.episode_reward = round(self.episode_reward + reward, 9)
        info = out.infos["agent"]
        # max_turns replies truncate the episode too (the session's max_actions).
        done = out.terminated["agent"] or out.truncated["agent"]
        text = str(out.observations["agent"]["text"])
        return BaseTextEnvStepOutput(
            observations=[{"role": "user", "content": text}],
            reward=reward,
            done=done,
            metadata={**info, "episode_reward": self.episode_reward},
            postprocessed_action=action,
        )

    def close(self) -> None:
        """Close the session."""
        self.session.close()

    def get_metrics(self) -> dict[str, Any]:
        """The episode's reward so far, for SkyRL's logs."""
        return {"episode_reward": self.episode_reward}


def register(env_id: str = ENV_ID) -> None:
    """Register `MetasreTextEnv` in skyrl_gym under `env_id` (again: nothing to do)."""
    if env_id not in registry:
        skyrl_register(id=env_id, entry_point=f"{__name__}:MetasreTextEnv")


__all__ = ["ENV_ID", "MetasreTextEnv", "register"]
