"""A PettingZoo `ParallelEnv` over the wire whose agents are a session's seats, and its AEC view.

    from metasre.agents.pettingzoo_env import MetasreParallelEnv, aec_env

    env = MetasreParallelEnv(
        "127.0.0.1:50051",
        scenario="split-evidence",
        seats=[("oncall", "app-oncall"), ("releases", "release-manager")],
        turn_policy="SIMULTANEOUS",
    )
    observations, infos = env.reset(seed=0)
    observations, rewards, terminated, truncated, infos = env.step(
        {"oncall": '{"tool": "get_alerts", "args": {}}',
         "releases": '{"tool": "get_events", "args": {}}'}
    )

Every seat is played by the server as it would be by separate agents: each seat sees only its
own view (a restricted seat's text never shows what its view hides), teammates' messages reach
it in its observation text, and rewards follow the session's attribution. A step applies one
action per live seat: in seat order under FREE_FOR_ALL, as one round under SIMULTANEOUS. All
seats end together (the report ends the episode for the team). `aec_env(...)` is the same
environment through PettingZoo's own `parallel_to_aec`. Needs the `gym` extra.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec

from .client import SeatLike
from .env_session import Observation, SessionSettings, SteppedSession
from .env_spaces import (
    ACTION_TEXT_LENGTH,
    OBSERVATION_TEXT_LENGTH,
    ToolCallText,
    as_vector,
    look_calls,
    observation_space,
)
from .gym_env import SEED_SPAN
from .sync import SyncClient


class MetasreParallelEnv(ParallelEnv[str, Observation, str | None]):
    """The seats of one META-SRE session as PettingZoo agents; see the module docstring.

    Args:
        target: The server's address (`host:port`); or pass `client`.
        scenario: A scenario id, or several to draw one from per episode.
        seats: The seats, as `MetasreClient.create_session` takes them; their agent ids are
            `possible_agents`.
        turn_policy: FREE_FOR_ALL or SIMULTANEOUS.
        attribution: SHARED, INDIVIDUAL, MIXED or DIFFERENCE.
        team_spirit: MIXED's alpha.
        reward_mode: DENSE or SPARSE.
        turn_timeout_seconds: SIMULTANEOUS: how long a round with a seat that did not call
            (its action malformed or refused) waits for it (0: the server's default).
        client: A client to share (not closed by the env); else one is made for `target`.
        admin_token: Sent by the client the env makes.
        max_actions: Steps per episode before it is truncated here (malformed actions count).
        text_length: The observation text's maximum length.
    """

    metadata: dict[str, Any] = {"name": "metasre_v0", "render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        target: str = "",
        *,
        scenario: str | Sequence[str] = "payment-bad-deploy",
        seats: Sequence[SeatLike] = ("agent_0", "agent_1"),
        turn_policy: str = "FREE_FOR_ALL",
        attribution: str = "SHARED",
        team_spirit: float = 0.0,
        reward_mode: str = "DENSE",
        turn_timeout_seconds: float = 0.0,
        client: SyncClient | None = None,
        admin_token: str | None = None,
        max_actions: int = 100,
        text_length: int = OBSERVATION_TEXT_LENGTH,
    ) -> None:
        if client is None and not target:
            raise ValueError("pass the server's address (target='host:port') or a client")
        self.scenarios = [scenario] if isinstance(scenario, str) else list(scenario)
        if not self.scenarios:
            raise ValueError("scenario: name at least one scenario")
        if not seats:
            raise ValueError("seats: name at least one seat")
        settings = SessionSettings(
            seats=tuple(seats),
            turn_policy=turn_policy,
            attribution=attribution,
            team_spirit=team_spirit,
            reward_mode=reward_mode,
            turn_timeout_seconds=turn_timeout_seconds,
        )
        self._owns_client = client is None
        self.client = client or SyncClient(target, admin_token=admin_token)
        try:
            self.session = SteppedSession(
                self.client,
                settings,
                text_length=text_length,
                max_actions=max_actions,
                vectorise=as_vector,
            )
            self._calls = look_calls(self.client.list_tools())
        except BaseException:
            if self._owns_client:
                self.client.close()
            raise
        self.possible_agents = [_agent_id(s) for s in seats]
        if len(set(self.possible_agents)) != len(self.possible_agents):
            raise ValueError(f"seats: agent ids repeat in {self.possible_agents}")
        self.agents: list[str] = []
        self.render_mode = None
        self._text_length = text_length
        self._rng = np.random.default_rng()

    @functools.cache  # noqa: B019  # one space object per agent, as the API asks
    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The same `Dict` space object for every call about `agent`."""
        return observation_space(self._text_length)

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.Space[Any]:
        """The same `ToolCallText` space object for every call about `agent`."""
        return ToolCallText(self._calls, ACTION_TEXT_LENGTH)

    @property
    def session_id(self) -> str:
        """The current episode's session on the server ("" before the first reset)."""
        return self.session.session_id

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Observation], dict[str, dict[str, Any]]]:
        """A new session. `options`: `seed` (the episode's exact seed), `scenario` (its id)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        options = options or {}
        scenario = options.get("scenario")
        if scenario is None:
            scenario = self.scenarios[int(self._rng.integers(len(self.scenarios)))]
        episode_seed = options.get("seed")
        if episode_seed is None:
            episode_seed = int(self._rng.integers(SEED_SPAN))
        observations, infos = self.session.reset(str(scenario), int(episode_seed))
        if set(observations) != set(self.possible_agents):  # the server named the seats
            raise RuntimeError(
                f"the session's seats {sorted(observations)} are not {self.possible_agents}"
            )
        self.agents = list(self.possible_agents)
        return observations, infos

    def step(
        self, actions: dict[str, str | None]
    ) -> tuple[
        dict[str, Observation],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        """One action per live seat (a JSON tool call each); seats left out sit the step out.

        An action that is not text (None included) is a malformed action, like bad text.
        """
        if not actions and not self.agents:
            return {}, {}, {}, {}, {}
        out = self.session.step(actions)
        self.agents = list(self.session.agents)
        return out.observations, out.rewards, out.terminated, out.truncated, out.infos

    def close(self) -> None:
        """Close the session, and the client if the env made it."""
        self.session.close()
        self.agents = []
        if self._owns_client:
            self.client.close()
            self._owns_client = False


def aec_env(target: str = "", **kwargs: Any) -> AECEnv[str, Observation, str | None]:
    """The parallel env through PettingZoo's own `parallel_to_aec` (seats act in turn)."""
    return parallel_to_aec(MetasreParallelEnv(target, **kwargs))


def _agent_id(seat: SeatLike) -> str:
    if isinstance(seat, str):
        return seat
    if isinstance(seat, Mapping):
        return str(seat["agent_id"])
    return seat[0]


__all__ = ["MetasreParallelEnv", "aec_env"]
