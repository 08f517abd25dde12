"""An LLM team: a commander, an investigator and a fixer, each a model with its role's prompt.

The same seats as the scripted team (only the commander may file the report); each seat plays
on its own thread with its own conversation, and teammates' messages join each conversation as
they arrive. One model for every role, or one per role:

    configs = {"commander": big, "investigator": big, "fixer": small}
    run = play_llm_team(client, "payment-bad-deploy", 3, configs)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from metasre.agents.llm import LLMConfig, LLMPolicy
from metasre.agents.policies.team import ROLES
from metasre.agents.sync import SyncAgent, SyncClient, WireCaller
from metasre.agents.team_session import TEAM_TURN_TIMEOUT, team_seats


class SeatInbox:
    """A seat's teammate messages, for `LLMPolicy.play(team=...)`."""

    def __init__(self, agent: SyncAgent) -> None:
        self.agent = agent

    def messages(self) -> Sequence[Mapping[str, Any]]:
        """Teammates' messages received so far, oldest first."""
        return self.agent.messages()

    def episode_over(self) -> bool:
        """Whether the episode or the seat's stream has ended."""
        conn = self.agent.conn
        return conn.inbox.episode_end is not None or conn.lost is not None

    def heard(self, after: int, timeout: float) -> bool:
        """Wait up to `timeout` seconds for more than `after` messages; True if they came."""
        deadline = time.monotonic() + timeout
        while True:
            seen = self.agent.news
            if len(self.agent.messages()) > after:
                return True
            left = deadline - time.monotonic()
            if left <= 0 or self.episode_over():
                return False
            self.agent.wait_news(seen, left)


@dataclass(frozen=True, slots=True)
class LLMTeamRun:
    """What the team did: the session, and each role's conversation and figures."""

    session_id: str
    policies: Mapping[str, LLMPolicy]


def play_llm_team(
    client: SyncClient,
    scenario_id: str,
    seed: int,
    configs: Mapping[str, LLMConfig],
    *,
    turn_policy: str = "FREE_FOR_ALL",
    on_message: Callable[[str, Mapping[str, Any]], None] | None = None,
    on_session: Callable[[str], None] | None = None,
) -> LLMTeamRun:
    """Create a session with the three role seats, play it with one model per role, hang up.

    `configs`: role -> the endpoint and model that plays it (every role of ROLES).
    `on_message(role, message)`: each message as it joins a role's conversation.
    `on_session(session_id)`: called once the session exists (to close it on Ctrl-C).
    """
    missing = [r for r in ROLES if r not in configs]
    if missing:
        raise ValueError(f"no model for the roles {missing}; roles are {list(ROLES)}")
    tools = client.list_tools()
    seats = team_seats([str(t["name"]) for t in tools])
    session = client.create_session(
        scenario_id,
        seed=seed,
        seats=seats,
        turn_policy=turn_policy,
        turn_timeout_seconds=TEAM_TURN_TIMEOUT,
    )
    if on_session is not None:
        on_session(session.id)
    allowed = {s[0]: set(s[2]) if len(s) > 2 else None for s in seats}

    def seat_tools(role: str) -> list[dict[str, Any]]:
        names = allowed[role]
        return [t for t in tools if names is None or t["name"] in names]

    def shown_as(role: str) -> Callable[[Mapping[str, Any]], None] | None:
        if on_message is None:
            return None
        show = on_message
        return lambda message: show(role, message)

    policies = {
        role: LLMPolicy(
            configs[role], seat_tools(role), on_message=shown_as(role), role=role, seats=ROLES
        )
        for role in ROLES
    }
    agents = {role: client.agent(session.id, session.tokens[role]) for role in ROLES}
    errors: list[BaseException] = []

    def run(role: str) -> None:
        try:
            agent = agents[role]
            policies[role].play(WireCaller(agent), agent.observation, team=SeatInbox(agent))
        except BaseException as exc:  # raised in the caller's thread below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(r,), name=f"llm-{r}") for r in ROLES]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for a in agents.values():
            a.close()
    if errors:
        raise errors[0]
    return LLMTeamRun(session.id, policies)


__all__ = ["LLMTeamRun", "SeatInbox", "play_llm_team"]
