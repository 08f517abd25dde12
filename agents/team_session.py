"""Seating and playing the scripted team in one session over the wire."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from metasre.agents.policies.team import ROLES, play_team
from metasre.agents.sync import SyncClient, WireCaller

REPORT_TOOL = "submit_report"
TEAM_TURN_TIMEOUT = 1.0
"""Seconds a ROUND_ROBIN turn or SIMULTANEOUS round waits for a seat with nothing to do: a role
that waits for a teammate and has no look left lets its turn go by in a second, not the
server's default 30."""

Seat = tuple[str, str] | tuple[str, str, list[str]]


def team_seats(tool_names: Sequence[str]) -> list[Seat]:
    """One seat per role; only the commander may file the report (enforced by the server)."""
    others = [t for t in tool_names if t != REPORT_TOOL]
    return [(r, r) if r == "commander" else (r, r, others) for r in ROLES]


@dataclass(frozen=True, slots=True)
class TeamRun:
    """What the team's seats saw once the episode was over."""

    session_id: str
    observations: Mapping[str, Mapping[str, Any]]
    """role -> the last observation that seat received."""
    messages: Sequence[Mapping[str, Any]]
    """Every teammate message any seat received."""


def play_team_session(
    client: SyncClient,
    scenario_id: str,
    seed: int,
    *,
    turn_policy: str = "FREE_FOR_ALL",
    tools: Sequence[str] | None = None,
    **session_options: Any,
) -> TeamRun:
    """Create a session for the team, play one episode, hang up.

    `tools`: the server's tool names, if already known (asked for otherwise).
    `session_options`: more arguments of `create_session` (attribution, reward_mode, ...).
    """
    if tools is None:
        tools = [str(t["name"]) for t in client.list_tools()]
    session_options.setdefault("turn_timeout_seconds", TEAM_TURN_TIMEOUT)
    session = client.create_session(
        scenario_id,
        seed=seed,
        seats=team_seats(tools),
        turn_policy=turn_policy,
        **session_options,
    )
    return play_seated_team(client, session.id, session.tokens)


def play_seated_team(client: SyncClient, session_id: str, tokens: Mapping[str, str]) -> TeamRun:
    """Join the team's seats of an existing session, play one episode, hang up."""
    agents = {role: client.agent(session_id, tokens[role]) for role in ROLES}
    try:
        play_team(
            {r: WireCaller(a) for r, a in agents.items()},
            agents["commander"].observation,
            {r: r for r in ROLES},
        )
        return TeamRun(
            session_id,
            {r: dict(a.observation) for r, a in agents.items()},
            [m for a in agents.values() for m in a.messages()],
        )
    finally:
        for a in agents.values():
            a.close()


__all__ = [
    "REPORT_TOOL",
    "TEAM_TURN_TIMEOUT",
    "Seat",
    "TeamRun",
    "play_seated_team",
    "play_team_session",
    "team_seats",
]
