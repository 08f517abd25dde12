"""Plays policies against an in-process episode, the way a client would over the wire."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from metasre.agents.policies import ToolReply
from metasre.simulator import Episode, EpisodeOverError, InvalidToolCallError


class EpisodeCaller:
    """A ToolCaller over an Episode: refusals come back as replies, never as exceptions."""

    def __init__(self, episode: Episode, agent_id: str = "agent-1") -> None:
        self.episode = episode
        self.agent_id = agent_id
        self.calls = 0

    def __call__(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        """Apply one call as this caller's agent."""
        self.calls += 1
        try:
            result = self.episode.apply(self.agent_id, tool, args)
        except InvalidToolCallError as exc:
            return ToolReply(False, str(exc), {}, False, "invalid_arguments")
        except EpisodeOverError as exc:
            return ToolReply(False, str(exc), {}, True, "episode_over")
        return ToolReply(
            result.ok, result.output.text, result.output.data, result.done, result.output.error
        )
