"""The entries of a session's log: applied calls, rewards, messages, turns, starts and ends.

Plain values with no protobuf in them, built by keyword (a field added in the middle cannot
shift the others). `metasre.service.wire.convert` turns them into wire messages, and
`metasre.service.store.codec.KINDS` into stored rows and back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...simulator import EpisodePhase, Grade, Observation


@dataclass(frozen=True, slots=True, kw_only=True)
class Reward:
    """A reward credited to one agent at one tick."""

    agent_id: str
    tick: int
    components: Mapping[str, float]
    """Named parts; they add up to `total`."""
    total: float
    source_agent_id: str = ""
    """The agent whose call earned it; empty for end-of-episode rewards."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Applied:
    """A tool call applied to the world."""

    tick: int
    agent_id: str
    call_id: str
    tool: str
    args: Mapping[str, Any]
    ok: bool
    error_code: str
    text: str
    data: Mapping[str, Any]
    minutes: float
    clock: float
    round: int
    """The SIMULTANEOUS round, 0 under the other policies."""
    phase: EpisodePhase
    """The episode's phase after the call."""
    observation: Observation
    """What on-call sees after the call (sent to the caller with its result)."""
    reward: Reward | None
    """The caller's own attributed reward for the call, if any."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """A send_message call, as teammates receive it."""

    tick: int
    sender: str
    to: tuple[str, ...]
    """Recipients' agent ids; ("*",) for the whole team."""
    text: str

    def reaches(self, agent_id: str) -> bool:
        """Whether `agent_id` is a recipient (the sender never receives its own message)."""
        return agent_id != self.sender and ("*" in self.to or agent_id in self.to)


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """The turn passed."""

    tick: int
    agent_id: str
    """The holder under ROUND_ROBIN; empty when a SIMULTANEOUS round opens for everyone."""
    round: int
    timeout_seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Started:
    """An episode started."""

    episode: int
    seed: int
    observation: Observation


@dataclass(frozen=True, slots=True, kw_only=True)
class Ended:
    """The episode ended and was graded."""

    tick: int
    phase: EpisodePhase
    grade: Grade
    agent_rewards: Mapping[str, float] = field(default_factory=dict)
    """Each agent's total reward over the episode."""


Event = Applied | Reward | Message | Turn | Started | Ended


@dataclass(frozen=True, slots=True, kw_only=True)
class LogEntry:
    """One entry of a session's log."""

    sequence: int
    """1, 2, 3, ... across the session's episodes."""
    episode: int
    tick: int
    event: Event
