"""An LLM team: one model per seat, each with its role's prompt.

The same seats as the scripted team: one per role the scenario declares (the seat's role is the
role's name, so the server gives it that role's view, and its prompt says what that view shows
and hides), or a commander, an investigator and a fixer (only the commander may file the
report). Each seat plays on its own thread with its own conversation, and teammates' messages
join each conversation as they arrive. One model for every role, or one per role:

    configs = {"commander": big, "investigator": big, "fixer": small}
    run = play_llm_team(client, "payment-bad-deploy", 3, configs)

A scenario role without a model of its own in `configs` gets the commander's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .llm import SYSTEM_PROMPT, LLMConfig, LLMPolicy
from .policies.team import ROLES, RoleSeat, reporter_of
from .sync import SyncAgent, SyncClient, WireCaller
from .team_session import (
    TEAM_TURN_TIMEOUT,
    Seat,
    role_seats,
    scenario_roles,
    seat_view,
    team_seats,
)

ROLE_TEAM_PROMPT = """
You work in a team of {count} seats: {seats}. You are {role}: {description}
What you see: {view}. A call aimed at what your view hides is refused (OUTSIDE_VIEW); your \
teammates see other parts of the system. Teammates' messages reach you as user messages that \
start with "Message from <id>:". Tell them what you found and what you need done where you \
cannot see (service, what failed, since when, what kind of failure) with send_message (to: \
their ids); act on what they tell you when your view lets you, and say what you did. {duty}
Reply without a tool call to wait for a teammate's message.
"""
REPORTER_DUTY = (
    "You file the incident report (submit_report ends the episode for the whole team): only "
    "once every teammate has said their part is fixed, naming the primary root cause."
)
OTHER_DUTY = "{reporter} files the report: tell it when what you fixed is fixed."


class RoleLLMPolicy(LLMPolicy):
    """An LLM seat in the seat of a scenario role: its prompt states the role and its view."""

    def __init__(
        self, config: LLMConfig, tools: Sequence[Mapping[str, Any]], *, seat: RoleSeat,
        team: Sequence[RoleSeat], **options: Any,
    ) -> None:  # fmt: skip
        super().__init__(config, tools, role=seat.name, seats=[s.name for s in team], **options)
        self.seat = seat
        self.reporter = reporter_of(team)

    def system_prompt(self) -> str:
        """The system message: the rules, the tools, the role and what its view shows."""
        lines = "\n".join(
            f"- {t['function']['name']}: {t['function']['description']}" for t in self.tools
        )
        duty = (
            REPORTER_DUTY
            if self.seat.name == self.reporter
            else OTHER_DUTY.format(reporter=self.reporter)
        )
        return SYSTEM_PROMPT.format(tools=lines) + ROLE_TEAM_PROMPT.format(
            count=len(self.seats),
            seats=", ".join(self.seats),
            role=self.seat.name,
            description=self.seat.description or "a member of the incident team.",
            view=self.seat.view.describe(),
            duty=duty,
        )


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
    """Create a session with the team's seats, play it with one model per seat, hang up.

    `configs`: role -> the endpoint and model that plays it: every role of ROLES, or for a
    scenario that declares roles, those roles (any missing one plays the commander's model).
    `on_message(role, message)`: each message as it joins a role's conversation.
    `on_session(session_id)`: called once the session exists (to close it on Ctrl-C).
    """
    roles = scenario_roles(client, scenario_id)
    names = [r.name for r in roles] or list(ROLES)
    if roles:
        fallback = configs.get("commander") or next(iter(configs.values()), None)
        if fallback is None:
            raise ValueError("no model for the team: configs is empty")
        configs = {r.name: configs.get(r.name, fallback) for r in roles}
    missing = [r for r in names if r not in configs]
    if missing:
        raise ValueError(f"no model for the roles {missing}; roles are {names}")
    tools = client.list_tools()
    seats: list[Seat] = role_seats(roles) if roles else team_seats([str(t["name"]) for t in tools])
    session = client.create_session(
        scenario_id,
        seed=seed,
        seats=seats,
        turn_policy=turn_policy,
        turn_timeout_seconds=TEAM_TURN_TIMEOUT,
    )
    if on_session is not None:
        on_session(session.id)
    by_role = {r.name: r for r in roles}
    allowed: dict[str, set[str] | None] = {
        s[0]: set(s[2]) if len(s) > 2 else (set(by_role[s[0]].tools) or None if roles else None)
        for s in seats
    }

    def seat_tools(role: str) -> list[dict[str, Any]]:
        names = allowed[role]
        return [t for t in tools if names is None or t["name"] in names]

    def shown_as(role: str) -> Callable[[Mapping[str, Any]], None] | None:
        if on_message is None:
            return None
        show = on_message
        return lambda message: show(role, message)

    agents = {role: client.agent(session.id, session.tokens[role]) for role in names}
    # Each seat's view for this seed is the one the server told it on joining.
    team = [replace(r, view=seat_view(agents[r.name], r.view)) for r in roles]
    policies: dict[str, LLMPolicy] = {
        seat.name: RoleLLMPolicy(
            configs[seat.name], seat_tools(seat.name), seat=seat, team=team,
            on_message=shown_as(seat.name),
        )
        for seat in team
    } or {
        role: LLMPolicy(
            configs[role], seat_tools(role), on_message=shown_as(role), role=role, seats=ROLES
        )
        for role in ROLES
    }  # fmt: skip
    errors: list[BaseException] = []

    def run(role: str) -> None:
        try:
            agent = agents[role]
            policies[role].play(WireCaller(agent), agent.observation, team=SeatInbox(agent))
        except BaseException as exc:  # raised in the caller's thread below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(r,), name=f"llm-{r}") for r in names]
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


__all__ = ["LLMTeamRun", "RoleLLMPolicy", "SeatInbox", "play_llm_team"]
