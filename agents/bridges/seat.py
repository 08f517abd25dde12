"""One seat played through a bridge: its calls, its rewards and its episode's end, per step.

Transport-neutral: the OpenEnv WebSocket and the MCP server both drive a `BridgeSeat` and
translate its `Step`s. The seat is an `AgentConnection` of the project's own client, so every
rule of the gRPC protocol holds as it is: the server checks the join token, cuts what the seat
sees to its view, validates every call and applies the session's reward mode and attribution.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..client import AgentConnection, CallResult
from ..errors import ClientError, ConnectionLostError, EpisodeOverError

END_WAIT_SECONDS = 10.0
"""How long a seat waits for its episode's end event after the server said the episode ended
(the event follows the last result on the same stream, so it is normally already there)."""


STATUS = ("minute", "sla_minutes_left", "steps_left", "phase")
"""What of the dashboard each step repeats."""


@dataclass(frozen=True, slots=True)
class Step:
    """What one reset or step gives the seat, in OpenEnv's terms."""

    observation: dict[str, Any]
    reward: float | None
    done: bool
    metadata: dict[str, Any] = field(default_factory=dict)


def tool_error(exc: ClientError) -> dict[str, Any]:
    """A refusal as OpenEnv's `ToolError`, with the server's code, reason and violations."""
    return {
        "error_type": "invalid_args" if exc.violations else "execution_error",
        "message": exc.message,
        "code": exc.code,
        "reason": exc.reason,
        "violations": [{"field": f, "description": d} for f, d in exc.violations],
    }


class BridgeSeat:
    """A joined seat and what it has already been told (rewards, messages, the end)."""

    def __init__(self, conn: AgentConnection, *, created: bool) -> None:
        self.conn = conn
        self.created = created
        """Whether the bridge created this seat's session for it (it then closes it)."""
        self._reported = 0.0
        """The sum of the rewards handed out so far; the end tops it up to the seat's total."""
        self._rewards_seen = 0
        self._messages_seen = 0
        self._steps = 0
        self.ended: Step | None = None
        """The final step, once the episode has ended; repeated to any later step."""

    @property
    def agent_id(self) -> str:
        """The seat's agent id."""
        return self.conn.agent_id

    @property
    def session_id(self) -> str:
        """The seat's session."""
        return self.conn.session_id

    def allowed_tools(self) -> list[str]:
        """The tools this seat may call (empty: every tool), as its session says."""
        for seat in self.conn.session.get("seats", ()):
            if seat.get("agent_id") == self.agent_id:
                return list(seat.get("allowed_tools") or ())
        return []

    def identity(self) -> dict[str, Any]:
        """Who this seat is: session, agent id, role and view."""
        return {
            "session_id": self.session_id,
            "agent_id": self.agent_id,
            "role": self.conn.role,
            "view": self.conn.view,
            "allowed_tools": self.allowed_tools(),
            "turn_policy": self.conn.session.get("turn_policy", ""),
            "reward_mode": self.conn.session.get("reward_mode", ""),
            "attribution": self.conn.session.get("reward_attribution", ""),
        }

    def first(self) -> Step:
        """The step a reset answers: the page as this seat's view shows it."""
        observation = dict(self.conn.observation)
        return Step(
            {"text": observation.get("text", ""), "dashboard": observation, **self.identity()},
            0.0,
            False,
            # SessionInfo.seed is an int64, which the JSON mapping writes as a string.
            {
                "seed": int(self.conn.session.get("seed") or 0),
                "scenario_id": observation.get("scenario_id"),
            },
        )

    def _news(self) -> tuple[float, list[dict[str, Any]]]:
        """Rewards from teammates' calls and messages that arrived since the last step."""
        inbox = self.conn.inbox
        rewards = inbox.rewards[self._rewards_seen :]
        self._rewards_seen = len(inbox.rewards)
        messages = inbox.messages[self._messages_seen :]
        self._messages_seen = len(inbox.messages)
        # The seat's own calls' rewards come with their results; the end's is topped up below.
        others = sum(
            float(r.get("total", 0.0))
            for r in rewards
            if r.get("source_agent_id") not in ("", self.agent_id)
        )
        return others, messages

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Step:
        """Apply one tool call as this seat; a refusal is an observation with an `error`.

        Raises:
            ConnectionLostError: the seat's stream ended (the session closed, the server left).
        """
        if self.ended is not None:
            return self.ended
        try:
            result = await self.conn.call(tool, arguments)
        except EpisodeOverError:
            return await self.finish()
        except ConnectionLostError:
            if self.conn.inbox.episode_end is not None:
                return await self.finish()
            raise
        except ClientError as exc:
            others, messages = self._news()
            self._reported += others
            return Step(
                {
                    "tool_name": tool,
                    "result": None,
                    "error": tool_error(exc),
                    "messages": messages,
                },
                others,
                False,
                {"refused": True, "reason": exc.reason},
            )
        self._steps += 1
        return await self._step(tool, result)

    async def _step(self, tool: str, result: CallResult) -> Step:
        others, messages = self._news()
        own = float(result.reward.get("total", 0.0))
        observation = {
            "tool_name": tool,
            "result": result.text,
            "data": dict(result.data),
            "error": None
            if result.ok
            else {"error_type": "tool_error", "message": result.text, "code": result.error_code},
            "messages": messages,
            # The clock and budget; the whole dashboard came with the reset.
            "status": {k: result.observation.get(k) for k in STATUS},
        }
        metadata: dict[str, Any] = {
            "tick": result.tick,
            "phase": result.phase,
            "reward_components": dict(result.reward.get("components", {})),
        }
        if result.done:
            end = await self.finish()
            return Step({**observation, **end.observation}, end.reward, True, end.metadata)
        self._reported += own + others
        return Step(observation, own + others, False, metadata)

    async def finish(self) -> Step:
        """The episode's end for this seat: the team grade and the seat's total reward.

        The reward is what the seat has not yet been handed of its total, so the rewards of
        every step add up to exactly the seat's total under the session's attribution.
        """
        if self.ended is not None:
            return self.ended
        seen = self.conn.news
        async with asyncio.timeout(END_WAIT_SECONDS):
            while self.conn.inbox.episode_end is None and self.conn.lost is None:
                seen = await self.conn.next_news(seen)
        end = self.conn.inbox.episode_end
        if end is None:
            raise ConnectionLostError(
                "the seat's stream ended before the episode's end arrived", code="CANCELLED"
            )
        _, messages = self._news()
        total = float(end.get("agent_rewards", {}).get(self.agent_id, 0.0))
        grade = dict(end.get("grade", {}))
        self.ended = Step(
            {"messages": messages, "episode_over": True, "grade": grade},
            total - self._reported,
            True,
            {
                "phase": end.get("phase", ""),
                "grade": grade,
                "team_grade": grade.get("total"),
                "resolved": grade.get("resolved"),
                "reward_total": total,
                "agent_rewards": dict(end.get("agent_rewards", {})),
            },
        )
        self._reported = total
        return self.ended

    def state(self) -> dict[str, Any]:
        """OpenEnv's State: `episode_id` and `step_count`, with the seat's identity."""
        return {
            "episode_id": self.session_id,
            "step_count": self._steps,
            "done": self.ended is not None,
            "reward_so_far": self._reported,
            **self.identity(),
        }


__all__ = ["END_WAIT_SECONDS", "BridgeSeat", "Step", "tool_error"]
