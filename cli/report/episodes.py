"""One exported episode read as the figures a report compares, and as the viewer shows it.

The figures are those of `metasre experiment` (grade and components, resolved, SLA met, steps,
simulated minutes, messages, redundant looks, idle rounds, credit per seat), read from the
episode's stored record rather than from a live run, so any store or export can be reported.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ...simulator import TOOLS, resolve
from ...simulator.scenarios.splits import split_of

MITIGATED = re.compile(r"\bmitigated at t\+(?P<minutes>\d+(?:\.\d+)?)")
"""The grade's `sla` component says when the cure held (`metasre.agents.teamwork` reads it too)."""
SLA_OF_PAGE = re.compile(r"\bSLA left (?P<minutes>\d+(?:\.\d+)?) min")
"""The page's status line states the SLA at minute 0."""
SLA_OF_DETAIL = re.compile(r"\bof (?P<minutes>\d+(?:\.\d+)?) min\b")
LOOKS = frozenset(name for name, tool in TOOLS.items() if tool.kind == "investigate")
"""Tools that only look: the same look by a second seat is redundant."""
MESSAGE_TOOLS = frozenset(name for name, tool in TOOLS.items() if tool.sends_message)
RESULT_CHARS = 1500
"""How much of a call's result the viewer keeps (its first characters): a read_logs result can
be 19 KB, and a report of a thousand episodes must stay small."""
PAGE_CHARS = 4000


@dataclass(frozen=True, slots=True)
class EpisodeRow:
    """One finished episode's figures."""

    key: str
    """`<run>/<session>/<episode>`: unique within the report, the viewer's address."""
    run: str
    config: str
    """Who played and how (seats, turn policy, attribution, reward mode); see `config_of`."""
    family: str
    seed: int
    grade: float
    resolved: bool
    components: Mapping[str, float]
    """The score in [0, 1] of each weighted grade component (fix, root cause, SLA, ...)."""
    penalty: float
    """What the unweighted components take off the grade (unneeded operations, hints): <= 0.
    Unweighted components that take nothing (the soak's account) are notes, not figures."""
    sla_minutes: float | None
    mitigated_at: float | None
    steps: int
    minutes: float
    """Simulated minutes from the page to the last call."""
    seats: tuple[str, ...]
    attribution: str
    credit: Mapping[str, float]
    """Each seat's reward over the episode under the session's attribution."""
    messages: int
    redundant_looks: int
    idle_rounds: int | None
    """SIMULTANEOUS rounds a seat sat out (one per seat per round); None under other policies,
    whose turns the record does not keep."""
    split: str | None = None
    """`train` or `test` (see `metasre.simulator.scenarios.splits`); None for a family this
    version does not know."""

    @property
    def sla_met(self) -> bool:
        """Mitigated within the SLA."""
        return (
            self.mitigated_at is not None
            and self.sla_minutes is not None
            and self.mitigated_at <= self.sla_minutes
        )

    @property
    def team(self) -> bool:
        """More than one seat."""
        return len(self.seats) > 1


def config_of(record: Mapping[str, Any]) -> str:
    """A configuration's name: its seats, and for teams the turn policy and attribution.

    `expert`, `random`, `team: commander+investigator+fixer | simultaneous | difference`; a
    solo seat names its policy and attribution only when they are not the defaults (an
    experiment's grid plays the expert under each); ` | sparse` when the reward mode is.
    """
    seats = [str(a["agent_id"]) for a in record["agents"]]
    team = len(seats) > 1
    parts = ["team: " + "+".join(seats) if team else seats[0]]
    policy = str(record.get("turn_policy", "")).lower()
    attribution = str(record.get("reward_attribution", "")).lower()
    if team or policy not in ("", "free_for_all"):
        parts.append(policy)
    if team or attribution not in ("", "shared"):
        parts.append(attribution)
    if str(record.get("reward_mode", "dense")).lower() != "dense":
        parts.append(str(record["reward_mode"]).lower())
    return " | ".join(p for p in parts if p)


@functools.lru_cache(maxsize=256)
def _entry(family: str) -> Any:
    try:
        return resolve(family)
    except LookupError:  # a retired or unknown family: its seeds have no known split
        return None


def split_for(family: str, seed: int) -> str | None:
    """The split of an instance: test seeds' structures never occur in training."""
    entry = _entry(family)
    return None if entry is None else str(split_of(entry, seed))


def _tool_calls(record: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(tool, args) of each applied call, in order (the chat form's assistant turns)."""
    out = []
    for message in record.get("messages", ()):
        if message.get("role") == "assistant":
            for call in message.get("tool_calls", ()):
                try:
                    args = orjson.loads(call["function"]["arguments"])
                except (TypeError, orjson.JSONDecodeError):
                    args = {}
                out.append((str(call["function"]["name"]), args if isinstance(args, dict) else {}))
    return out


def _results(record: Mapping[str, Any]) -> list[str]:
    return [str(m.get("content") or "") for m in record.get("messages", ()) if m["role"] == "tool"]


def sla_of(record: Mapping[str, Any]) -> float | None:
    """The scenario's SLA in minutes: from the page, else from the grade's sla detail."""
    messages = record.get("messages") or []
    if messages and (found := SLA_OF_PAGE.search(str(messages[0].get("content") or ""))):
        return float(found.group("minutes"))
    for c in (record.get("grade") or {}).get("components", ()):
        if c.get("name") == "sla" and (found := SLA_OF_DETAIL.search(str(c.get("detail", "")))):
            return float(found.group("minutes"))
    return None


def row_of(run: str, record: Mapping[str, Any], config: str) -> EpisodeRow:
    """The figures of one exported episode."""
    grade = record.get("grade") or {}
    steps: Sequence[Mapping[str, Any]] = record.get("steps") or ()
    seats = tuple(str(a["agent_id"]) for a in record["agents"])
    calls = _tool_calls(record)
    first_look: dict[str, str] = {}
    redundant = 0
    for step, (tool, args) in zip(steps, calls, strict=False):
        if tool in LOOKS:
            key = tool + json.dumps(args, sort_keys=True)
            agent = str(step["agent_id"])
            if first_look.setdefault(key, agent) != agent:
                redundant += 1
    idle: int | None = None
    if str(record.get("turn_policy", "")).lower() == "simultaneous" and len(seats) > 1:
        rounds: dict[int, set[str]] = {}
        for step in steps:
            rounds.setdefault(int(step.get("round") or 0), set()).add(str(step["agent_id"]))
        idle = sum(len(set(seats) - callers) for r, callers in rounds.items() if r)
    sla: Mapping[str, Any] = next(
        (c for c in grade.get("components", ()) if c.get("name") == "sla"), {}
    )
    found = MITIGATED.search(str(sla.get("detail", "")))
    return EpisodeRow(
        key=f"{run}/{record['session_id']}/{record['episode']}",
        run=run,
        config=config,
        family=str(record["scenario_id"]),
        seed=int(record["seed"]),
        grade=float(grade.get("total", 0.0)),
        resolved=bool(grade.get("resolved", False)),
        components={
            str(c["name"]): float(c.get("score", 0.0))
            for c in grade.get("components", ())
            if float(c.get("weight", 0.0)) > 0
        },
        penalty=sum(
            min(0.0, float(c.get("value", 0.0)))
            for c in grade.get("components", ())
            if float(c.get("weight", 0.0)) == 0
        ),
        sla_minutes=sla_of(record),
        mitigated_at=float(found.group("minutes")) if found else None,
        steps=len(steps),
        minutes=float(steps[-1].get("clock") or 0.0) if steps else 0.0,
        seats=seats,
        attribution=str(record.get("reward_attribution", "")),
        credit={str(k): float(v) for k, v in (record.get("agent_rewards") or {}).items()},
        messages=sum(1 for tool, _ in calls if tool in MESSAGE_TOOLS),
        redundant_looks=redundant,
        idle_rounds=idle,
        split=split_for(str(record["scenario_id"]), int(record["seed"])),
    )


def _short(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... ({len(text) - limit} more characters not kept in the report)"


def viewer_record(row: EpisodeRow, record: Mapping[str, Any]) -> dict[str, Any]:
    """What the trajectory viewer shows of one episode: compact, results cut short."""
    calls = _tool_calls(record)
    results = _results(record)
    rewards: dict[tuple[int, str], Mapping[str, Any]] = {}
    for r in record.get("rewards") or ():
        # Rewards that a later tick pays (the end's settlement) keep the last per seat and tick.
        rewards[(int(r["tick"]), str(r["agent_id"]))] = r
    out_calls = []
    for i, step in enumerate(record.get("steps") or ()):
        tool, args = calls[i] if i < len(calls) else (str(step.get("tool", "")), {})
        reward = rewards.get((int(step["tick"]), str(step["agent_id"])))
        out_calls.append(
            {
                "tick": step["tick"],
                "agent": step["agent_id"],
                "tool": tool,
                "args": args,
                "ok": bool(step.get("ok", True)),
                "error": step.get("error_code") or "",
                "minutes": step.get("minutes"),
                "clock": step.get("clock"),
                "round": step.get("round") or 0,
                "reward": None if reward is None else reward.get("total"),
                "reward_components": {} if reward is None else dict(reward.get("components") or {}),
                "result": _short(results[i] if i < len(results) else "", RESULT_CHARS),
            }
        )
    grade = record.get("grade") or {}
    messages = record.get("messages") or [{}]
    return {
        "key": row.key,
        "run": row.run,
        "config": row.config,
        "family": row.family,
        "seed": row.seed,
        "split": row.split,
        "seats": list(row.seats),
        "turn_policy": record.get("turn_policy", ""),
        "attribution": row.attribution,
        "sla": row.sla_minutes,
        "mitigated_at": row.mitigated_at,
        "grade": row.grade,
        "resolved": row.resolved,
        "components": [
            {k: c.get(k) for k in ("name", "score", "weight", "value", "detail")}
            for c in grade.get("components", ())
        ],
        "credit": dict(row.credit),
        "page": _short(str(messages[0].get("content") or ""), PAGE_CHARS),
        # Every reward paid, to every seat: (tick, seat, total), for the running totals.
        "rewards": [
            [int(r["tick"]), str(r["agent_id"]), float(r["total"])]
            for r in record.get("rewards") or ()
        ],
        "calls": out_calls,
    }
