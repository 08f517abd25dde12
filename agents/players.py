"""Episode players by name: who `--agent` and an experiment's teams choose from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .rollout import EpisodePlayer
from .sync import SyncClient

if TYPE_CHECKING:
    from .llm import LLMConfig

AGENTS = ("expert", "random", "team", "llm")
"""The players `make_player` knows."""


def make_player(
    agent: str,
    client: SyncClient,
    llm: LLMConfig | None = None,
    **session_options: Any,
) -> EpisodePlayer:
    """The episode player named `agent` (one of AGENTS; `llm` needs its endpoint's config).

    `session_options`: more arguments of `create_session` (turn_policy, attribution, ...).

    Raises:
        ValueError: an agent not in AGENTS, or `llm` without its config.
    """
    from .policies import ExpertPolicy, RandomPolicy
    from .rollout import solo_player

    if agent == "expert":
        return solo_player(lambda seed: ExpertPolicy(), "expert", **session_options)
    if agent == "random":
        served = client.list_tools()
        return solo_player(lambda seed: RandomPolicy(seed, served), "random", **session_options)
    if agent == "llm" and llm is not None:
        from .llm import LLMPolicy

        tools = client.list_tools()
        return solo_player(lambda seed: LLMPolicy(llm, tools), "llm", **session_options)
    if agent == "team":
        from .team_session import team_player

        return team_player(**session_options)
    if agent == "llm":
        raise ValueError("the llm player needs its endpoint's LLMConfig")
    raise ValueError(f"unknown agent {agent!r}; choose from {', '.join(AGENTS)}")


__all__ = ["AGENTS", "make_player"]
