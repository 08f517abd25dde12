"""How a team worked, read from one episode's trajectory (`get_trajectory`).

The figures an experimenter compares between team compositions, turn policies and attribution
modes: who did what (steps and credit per seat), how they talked (messages sent, and received by
each recipient), what they wasted (the same look taken by two seats, rounds or turns a seat let
pass without a call), and how fast the incident was mitigated. Pure functions of the log, so a
stored or exported trajectory gives the same figures as a live one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

LOOK_KIND = "investigate"
"""The `kind` ListTools gives the tools that only look (logs, metrics, files, git, tests)."""

MITIGATED = re.compile(r"\bmitigated at t\+(?P<minutes>\d+(?:\.\d+)?)")
"""How the grade's `sla` component states when the incident was mitigated: the grader's own
figure, the same under every attribution and reward mode (shaping rewards are not: DIFFERENCE
and SPARSE pay nothing per call)."""


@dataclass(frozen=True, slots=True)
class EpisodeTeamwork:
    """One episode's teamwork figures."""

    seats: tuple[str, ...]
    grade: float
    resolved: bool
    ended: bool
    """False when the log has no end (the episode was cut short)."""
    steps: int
    """Applied calls, all seats together."""
    steps_by_seat: Mapping[str, int]
    credit: Mapping[str, float]
    """Each seat's reward over the episode under the session's attribution."""
    messages_sent: int
    messages_received: int
    """Deliveries: a message to two teammates (or to the team of three) counts twice."""
    redundant_looks: int
    """Looks (a tool of kind `investigate`, same arguments) a seat took after another seat."""
    idle_turns: int
    """ROUND_ROBIN turns that passed with no call of their holder, and SIMULTANEOUS rounds a
    seat sat out (one per seat per round); 0 under FREE_FOR_ALL, which has no turns."""
    mitigated_at: float | None
    """Simulated minutes from the page to the cure that held; None if never mitigated."""
    minutes: float
    """Simulated minutes from the page to the last call."""
    sla_minutes: float
    sla_met: bool
    """Mitigated within the scenario's SLA."""
    components: Mapping[str, float] = field(default_factory=dict)


def _kind(event: Mapping[str, Any]) -> str:
    for key in ("applied", "reward", "message", "turn", "started", "ended"):
        if key in event:
            return key
    return ""


def teamwork(
    events: Iterable[Mapping[str, Any]],
    *,
    sla_minutes: float,
    look_tools: Iterable[str],
    seats: Sequence[str] = (),
) -> EpisodeTeamwork:
    """The figures of one episode's log.

    Args:
        events: The episode's events in log order, as `get_trajectory` gives them.
        sla_minutes: The scenario's SLA (ListScenarios).
        look_tools: Names of the tools that only look (ListTools kind `investigate`).
        seats: The session's agent ids; taken from the log when empty.
    """
    looks = frozenset(look_tools)
    calls: list[Mapping[str, Any]] = []
    turns: list[tuple[int, Mapping[str, Any]]] = []  # (position among calls, turn)
    messages: list[Mapping[str, Any]] = []
    ended: Mapping[str, Any] | None = None
    for event in events:
        kind = _kind(event)
        if kind == "applied":
            calls.append(event["applied"])
        elif kind == "turn":
            turns.append((len(calls), event["turn"]))
        elif kind == "message":
            messages.append(event["message"])
        elif kind == "ended":
            ended = event["ended"]
    credit = {str(k): float(v) for k, v in (ended or {}).get("agent_rewards", {}).items()}
    seat_ids = tuple(seats) or tuple(
        dict.fromkeys([*credit, *(str(c.get("agent_id", "")) for c in calls)])
    )
    received = 0
    for m in messages:
        to = {str(t) for t in m.get("to", ())}
        sender = str(m.get("from_agent_id", ""))
        received += len(set(seat_ids) - {sender} if "*" in to else to - {sender})
    steps_by_seat = {s: 0 for s in seat_ids}
    first_look: dict[str, str] = {}
    redundant = 0
    for c in calls:
        agent = str(c.get("agent_id", ""))
        steps_by_seat[agent] = steps_by_seat.get(agent, 0) + 1
        tool = str(c.get("tool", ""))
        if tool in looks:
            key = tool + json.dumps(c.get("args", {}), sort_keys=True)
            if key in first_look and first_look[key] != agent:
                redundant += 1
            first_look.setdefault(key, agent)
    grade = (ended or {}).get("grade", {})
    sla: Mapping[str, Any] = next(
        (c for c in grade.get("components", ()) if c.get("name") == "sla"), {}
    )
    found = MITIGATED.search(str(sla.get("detail", "")))
    mitigated = float(found.group("minutes")) if found else None
    return EpisodeTeamwork(
        seats=seat_ids,
        grade=float(grade.get("total", 0.0)),
        resolved=bool(grade.get("resolved", False)),
        ended=ended is not None,
        steps=len(calls),
        steps_by_seat=steps_by_seat,
        credit=credit,
        messages_sent=len(messages),
        messages_received=received,
        redundant_looks=redundant,
        idle_turns=_idle_turns(turns, calls, seat_ids),
        mitigated_at=mitigated,
        minutes=float(calls[-1].get("clock", 0.0)) if calls else 0.0,
        sla_minutes=sla_minutes,
        sla_met=mitigated is not None and mitigated <= sla_minutes,
        components={
            str(c["name"]): float(c.get("score", 0.0)) for c in grade.get("components", ())
        },
    )


def _idle_turns(
    turns: Sequence[tuple[int, Mapping[str, Any]]],
    calls: Sequence[Mapping[str, Any]],
    seats: Sequence[str],
) -> int:
    idle = 0
    for i, (start, turn) in enumerate(turns):
        end = turns[i + 1][0] if i + 1 < len(turns) else len(calls)
        callers = {str(c.get("agent_id", "")) for c in calls[start:end]}
        if int(turn.get("round", 0)):
            idle += sum(1 for s in seats if s not in callers)
        elif turn.get("agent_id") and str(turn["agent_id"]) not in callers:
            idle += 1
    return idle


__all__ = ["LOOK_KIND", "MITIGATED", "EpisodeTeamwork", "teamwork"]
