"""Plays policies against an in-process episode, the way a client would over the wire."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..agents.policies import ToolReply
from ..simulator import Episode, EpisodeOverError, InvalidToolCallError
from ..simulator.tools import get_tool, validate_args
from ..simulator.views import FULL, View, observe, owners_of, refusal


class EpisodeCaller:
    """A ToolCaller over an Episode: refusals come back as replies, never as exceptions.

    `view`: what the caller sees, enforced as the server does: a call aimed at what it hides is
    refused (error OUTSIDE_VIEW, nothing applied) and the others' output is cut to it.
    """

    def __init__(self, episode: Episode, agent_id: str = "agent-1", view: View = FULL) -> None:
        self.episode = episode
        self.agent_id = agent_id
        self.view = view
        self.calls = 0
        self.cures = 0
        """Calls whose step reward paid for a cured fault: what the wire tells an agent after
        each call (a retrying shallow policy stops on it)."""

    def __call__(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        """Apply one call as this caller's agent."""
        self.calls += 1
        try:
            if not self.view.full:
                spec_tool = get_tool(tool)
                parsed = validate_args(spec_tool, args)
                why = refusal(
                    self.view, spec_tool, parsed.model_dump(), owners_of(self.episode.instance.spec)
                )
                if why:
                    return ToolReply(False, why, {}, False, "OUTSIDE_VIEW")
            result = self.episode.apply(self.agent_id, tool, args, self.view)
        except InvalidToolCallError as exc:
            return ToolReply(False, str(exc), {}, False, "invalid_arguments")
        except EpisodeOverError as exc:
            return ToolReply(False, str(exc), {}, True, "episode_over")
        self.cures += result.reward.components.get("fault_cured", 0.0) > 0.0
        return ToolReply(
            result.ok, result.output.text, result.output.data, result.done, result.output.error
        )

    def observation(self) -> dict[str, Any]:
        """The dashboard as this caller's view shows it, as plain data."""
        return observe(self.view, self.episode.observation()).to_dict()


__all__ = ["EpisodeCaller"]
