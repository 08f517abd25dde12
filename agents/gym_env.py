"""A single-seat Gymnasium `Env` over the wire, and a vector of them for many sessions at once.

    import gymnasium
    from metasre.agents.gym_env import MetasreEnv

    env = MetasreEnv("127.0.0.1:50051", scenario="payment-bad-deploy")
    obs, info = env.reset(seed=0)              # a new session; obs["text"] is the page
    obs, reward, terminated, truncated, info = env.step(
        '{"tool": "read_logs", "args": {"service": "order-service", "level": "ERROR"}}'
    )

Each `reset` opens a new session (the previous one is closed) on the episode seed drawn from
the env's generator (`reset(seed=...)` seeds it), or `options={"seed": n, "scenario": id}`.
`terminated` when the report is filed, `truncated` when the step budget runs out or after
`max_actions` actions (malformed ones included); the final step's reward includes the grade.
See `metasre.agents.env_spaces` for the spaces and `metasre.agents.env_session` for how a step
is played. Needs the `gym` extra.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, SupportsFloat

import gymnasium
from gymnasium.vector import SyncVectorEnv

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
from .sync import SyncClient

SEED_SPAN = 2**31 - 1
"""Episode seeds are drawn from [0, SEED_SPAN)."""


class MetasreEnv(gymnasium.Env[dict[str, Any], str]):
    """One seat of a META-SRE session as a Gymnasium environment; see the module docstring.

    Args:
        target: The server's address (`host:port`); or pass `client`.
        scenario: A scenario id, or several to draw one from per episode.
        seat: The seat played: an agent id, or (agent id, role) to take a role's view on a
            team family, or a mapping as `MetasreClient.create_session` takes it.
        client: A client to share (the env does not close it); else one is made for `target`.
        admin_token: Sent by the client the env makes.
        reward_mode: DENSE (shaping as calls apply) or SPARSE (the grade only).
        max_actions: Actions per episode before it is truncated here (malformed ones count).
        text_length: The observation text's maximum length.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012  # Gymnasium's class attribute

    def __init__(
        self,
        target: str = "",
        *,
        scenario: str | Sequence[str] = "payment-bad-deploy",
        seat: SeatLike = "agent",
        client: SyncClient | None = None,
        admin_token: str | None = None,
        reward_mode: str = "DENSE",
        max_actions: int = 100,
        text_length: int = OBSERVATION_TEXT_LENGTH,
    ) -> None:
        if client is None and not target:
            raise ValueError("pass the server's address (target='host:port') or a client")
        self.scenarios = [scenario] if isinstance(scenario, str) else list(scenario)
        if not self.scenarios:
            raise ValueError("scenario: name at least one scenario")
        self._owns_client = client is None
        self.client = client or SyncClient(target, admin_token=admin_token)
        self.session = SteppedSession(
            self.client,
            SessionSettings(seats=(seat,), reward_mode=reward_mode),
            text_length=text_length,
            max_actions=max_actions,
            vectorise=as_vector,
        )
        self.observation_space = observation_space(text_length)
        self.action_space = ToolCallText(look_calls(self.client.list_tools()), ACTION_TEXT_LENGTH)
        self.render_mode = None
        self._agent = ""

    @property
    def session_id(self) -> str:
        """The current episode's session on the server ("" before the first reset)."""
        return self.session.session_id

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """A new episode. `options`: `seed` (the episode's exact seed), `scenario` (its id)."""
        super().reset(seed=seed)
        options = options or {}
        scenario = options.get("scenario")
        if scenario is None:
            scenario = self.scenarios[int(self.np_random.integers(len(self.scenarios)))]
        episode_seed = options.get("seed")
        if episode_seed is None:
            episode_seed = int(self.np_random.integers(SEED_SPAN))
        observations, infos = self.session.reset(str(scenario), int(episode_seed))
        (self._agent,) = observations
        return observations[self._agent], infos[self._agent]

    def step(self, action: str) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply one action: a JSON tool call (anything else is answered with an error text)."""
        out = self.session.step({self._agent: action})
        a = self._agent
        return (
            out.observations[a],
            out.rewards[a],
            out.terminated[a],
            out.truncated[a],
            out.infos[a],
        )

    def close(self) -> None:
        """Close the session, and the client if the env made it."""
        self.session.close()
        if self._owns_client:
            self.client.close()
            self._owns_client = False


class MetasreVectorEnv(SyncVectorEnv):
    """`count` `MetasreEnv`s over one shared client (one channel): a Gymnasium vector env.

    Each plays its own session, all open on the server at once; `kwargs` are `MetasreEnv`'s.
    Gymnasium's autoreset applies (the step after an episode ends resets that env). For
    sessions played by separate processes, wrap `MetasreEnv` in `AsyncVectorEnv` instead
    (each process makes its own client).
    """

    def __init__(
        self, target: str, count: int, *, admin_token: str | None = None, **kwargs: Any
    ) -> None:
        if count < 1:
            raise ValueError(f"count must be at least 1, got {count}")
        self.client = SyncClient(target, admin_token=admin_token)
        client = self.client

        def one() -> Callable[[], gymnasium.Env[Any, Any]]:
            return lambda: MetasreEnv(client=client, **kwargs)

        try:
            super().__init__([one() for _ in range(count)])
        except BaseException:
            client.close()
            raise

    def close_extras(self, **kwargs: Any) -> None:
        """Close every env's session, then the shared client."""
        super().close_extras(**kwargs)
        self.client.close()


__all__ = ["SEED_SPAN", "MetasreEnv", "MetasreVectorEnv"]
