"""Seating and playing the scripted team in one session over the wire.

A scenario that declares roles gets one seat per role (the seat's role is the role's name, so
the server gives it that role's view and tools); any other gets the commander, investigator and
fixer.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .policies.base import Policy
from .policies.team import ROLES, RoleSeat, SeatView, play_role_team, play_team
from .rollout import EpisodePlayer, EpisodeSpec, Played, played
from .sync import SyncAgent, SyncClient, WireCaller

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


_ROLES: weakref.WeakKeyDictionary[SyncClient, dict[str, tuple[RoleSeat, ...]]] = (
    weakref.WeakKeyDictionary()
)
_ROLES_LOCK = threading.Lock()


def scenario_roles(client: SyncClient, scenario_id: str) -> tuple[RoleSeat, ...]:
    """The roles `scenario_id` declares (ListScenarios, asked once per client); () if none.

    Their views are the family's at seed 0: a seat learns its view for the episode's seed
    when it joins.
    """
    with _ROLES_LOCK:
        known = _ROLES.get(client)
    if known is None:
        known = {
            str(s["id"]): tuple(RoleSeat.of(r) for r in s.get("roles", ()))
            for s in client.list_scenarios()
        }
        with _ROLES_LOCK:
            _ROLES[client] = known
    if scenario_id in known:
        return known[scenario_id]
    # A name without its version: the newest version, as the server resolves it.
    versions = {
        int(version): sid
        for sid in known
        for base, _, version in [sid.rpartition("-v")]
        if version.isdigit() and scenario_id in (base, base.rpartition("/")[2])
    }
    return known[versions[max(versions)]] if versions else ()


def pick_role(roles: Sequence[RoleSeat], role: str) -> RoleSeat:
    """The role named `role`, or the Nth (from 1) when `role` is a number.

    Raises:
        LookupError: no such role (the message lists the roles).
    """
    if role.isdigit() and 1 <= int(role) <= len(roles):
        return roles[int(role) - 1]
    found = next((r for r in roles if r.name == role), None)
    if found is None:
        names = ", ".join(r.name for r in roles) or "none"
        raise LookupError(f"the scenario has no role {role!r} (its roles: {names})")
    return found


def role_player(
    make_policy: Callable[[int], Policy], role: str, **session_options: Any
) -> EpisodePlayer:
    """A player that seats one policy alone, in the seat of one scenario role (its view).

    `role`: a role name, or its position among the scenario's roles from 1 (roles differ
    between families). `session_options`: more arguments of `create_session`.
    """

    def play(client: SyncClient, spec: EpisodeSpec) -> Played:
        name = pick_role(scenario_roles(client, spec.scenario_id), role).name
        session = client.create_session(
            spec.scenario_id, seed=spec.seed, seats=[(name, name)], **session_options
        )
        agent = client.agent(session.id, session.tokens[name])
        try:
            make_policy(spec.seed).play(WireCaller(agent), agent.observation)
            return played(session.id, agent.observation)
        finally:
            agent.close()

    return play


def team_player(**session_options: Any) -> EpisodePlayer:
    """Seats the scripted team (commander, investigator, fixer); only the commander reports.

    `session_options`: more arguments of `create_session` (turn_policy, attribution, ...).
    """
    # The server's tools do not change during a rollout: asked for once per client, not per
    # episode (a ListTools reply carries every tool's JSON Schema).
    tools: dict[int, tuple[SyncClient, tuple[Mapping[str, Any], ...]]] = {}

    def play(client: SyncClient, spec: EpisodeSpec) -> Played:
        known = tools.get(id(client))
        if known is None or known[0] is not client:
            known = tools[id(client)] = (client, tuple(client.list_tools()))
        run = play_team_session(
            client, spec.scenario_id, spec.seed, tools=known[1], **session_options
        )
        # The seat that saw the latest tick holds the episode's final step count.
        return max(
            (played(run.session_id, obs) for obs in run.observations.values()),
            key=lambda p: (p.steps, p.minutes),
        )

    return play


def role_seats(roles: Sequence[RoleSeat]) -> list[Seat]:
    """One seat per scenario role, its agent id and role the role's name."""
    return [(r.name, r.name) for r in roles]


def play_team_session(
    client: SyncClient,
    scenario_id: str,
    seed: int,
    *,
    turn_policy: str = "FREE_FOR_ALL",
    tools: Sequence[Mapping[str, Any]] | None = None,
    roles: Sequence[RoleSeat] | None = None,
    **session_options: Any,
) -> TeamRun:
    """Create a session for the team, play one episode, hang up.

    `tools`: the server's tools as ListTools gives them, if already known (asked for otherwise).
    `roles`: the scenario's roles, if already known (asked for otherwise); with none, the
    commander, investigator and fixer play.
    `session_options`: more arguments of `create_session` (attribution, reward_mode, ...).
    """
    if roles is None:
        roles = scenario_roles(client, scenario_id)
    session_options.setdefault("turn_timeout_seconds", TEAM_TURN_TIMEOUT)
    if tools is None:
        tools = client.list_tools()
    seats = role_seats(roles) if roles else team_seats([str(t["name"]) for t in tools])
    session = client.create_session(
        scenario_id,
        seed=seed,
        seats=seats,
        turn_policy=turn_policy,
        **session_options,
    )
    if roles:
        return play_seated_role_team(client, session.id, session.tokens, roles, tools=tools)
    return play_seated_team(client, session.id, session.tokens)


def seat_view(agent: SyncAgent, fallback: SeatView) -> SeatView:
    """The view the server gave the seat when it joined (`fallback` if it says none)."""
    view = getattr(agent.conn, "view", None)
    return SeatView.of(view) if isinstance(view, Mapping) and view else fallback


def play_seated_role_team(
    client: SyncClient,
    session_id: str,
    tokens: Mapping[str, str],
    roles: Sequence[RoleSeat],
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
) -> TeamRun:
    """Join the seats of a role team in an existing session, play one episode, hang up.

    Each seat plays within the view the server gave it; a seat whose play is over hangs up
    at once, so that SIMULTANEOUS rounds no longer wait for it. `tools`: the server's tools
    as ListTools gives them, if already known (asked for otherwise).
    """
    if tools is None:
        tools = client.list_tools()
    agents = {r.name: client.agent(session_id, tokens[r.name]) for r in roles}
    seats = [replace(r, view=seat_view(agents[r.name], r.view)) for r in roles]
    observations: dict[str, Mapping[str, Any]] = {}
    messages: dict[str, list[Mapping[str, Any]]] = {}

    def hang_up(name: str) -> None:
        agent = agents[name]
        observations[name] = dict(agent.observation)
        messages[name] = list(agent.messages())
        agent.close()

    try:
        play_role_team(
            {n: WireCaller(a) for n, a in agents.items()}, seats, on_done=hang_up, tools=tools
        )
        return TeamRun(
            session_id,
            {r.name: observations.get(r.name, agents[r.name].observation) for r in roles},
            [m for r in roles for m in messages.get(r.name, agents[r.name].messages())],
        )
    finally:
        for a in agents.values():
            a.close()


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
    "pick_role",
    "play_seated_role_team",
    "play_seated_team",
    "play_team_session",
    "role_player",
    "role_seats",
    "scenario_roles",
    "seat_view",
    "team_player",
    "team_seats",
]
