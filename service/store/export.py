"""Stored trajectories as training data: one JSON object per episode, in chat form.

Each episode becomes::

    {"session_id", "episode", "scenario_id", "seed", "turn_policy", "reward_attribution",
     "reward_mode", "agents": [{"agent_id", "role", "allowed_tools", "view", "sees", "tools",
                                "page", "role_description", "heard"}],
     "finished", "phase", "grade": {"total", "resolved", "components": [...], ...} | null,
     "agent_rewards": {agent_id: total},
     "messages": [
        {"role": "system", "content": <the page: the initial observation as text>},
        {"role": "assistant", "name": <agent_id>, "content": null,
         "tool_calls": [{"id": <call id>, "type": "function",
                         "function": {"name": <tool>, "arguments": "<JSON>"}}]},
        {"role": "tool", "tool_call_id": <call id>, "name": <tool>, "content": <result text>},
        ...],
     "steps": [{"tick", "agent_id", "call_id", "tool", "round", "ok", "error_code", "minutes",
                "clock", "reward"}],
     "rewards": [{"tick", "agent_id", "components", "total", "source_agent_id"}]}

`messages` is the OpenAI chat-completions shape (every call an assistant turn named after its
agent, then the tool's answer), so a trainer can feed it to a chat template as is. `steps` lines
up one to one with the assistant messages and keeps what the chat form has no place for: the
tick, the SIMULTANEOUS round, whether the world accepted the call. Tool call ids are the agents'
own call ids when those are unique within the episode, else `call-<tick>`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TextIO

from ...simulator import resolve, views
from ...simulator.replay import RecordedCall
from ...simulator.scenarios.spec import RoleSpec
from ...simulator.views import View
from ..core.events import Message
from .codec import observation_of
from .contract import EventRow, SessionRow, Store


def episodes(
    store: Store,
    session_ids: Sequence[str] = (),
    *,
    unfinished: bool = False,
) -> Iterator[dict[str, Any]]:
    """Every stored episode (of `session_ids` if given), oldest session first.

    Args:
        store: The trajectory store.
        session_ids: Only these sessions, in this order (default: every session).
        unfinished: Include episodes that never ended (no grade): a session closed or a server
            killed mid-episode.

    Raises:
        LookupError: a session id in `session_ids` is not in the store.
    """
    sessions = store.sessions()
    if session_ids:
        known = {s.session_id: s for s in sessions}
        missing = [sid for sid in session_ids if sid not in known]
        if missing:
            raise LookupError(f"no session {', '.join(missing)} in the store at {store.where}")
        sessions = [known[sid] for sid in dict.fromkeys(session_ids)]
    for session in sessions:
        for record in session_episodes(session, store.events(session.session_id)):
            if unfinished or record["finished"]:
                yield record


def session_episodes(session: SessionRow, events: Iterable[EventRow]) -> list[dict[str, Any]]:
    """The episodes of one stored session, in order."""
    by_episode: dict[int, list[EventRow]] = {}
    for event in events:
        by_episode.setdefault(event.episode, []).append(event)
    return [
        episode_record(session, number, rows)
        for number, rows in sorted(by_episode.items())
        if any(r.kind == "started" for r in rows)
    ]


def episode_record(session: SessionRow, episode: int, events: Sequence[EventRow]) -> dict[str, Any]:
    """One episode in the chat form of the module docstring."""
    config = session.config
    started = next(e.payload for e in events if e.kind == "started")
    ended = next((e.payload for e in events if e.kind == "ended"), None)
    applied = [e.payload for e in events if e.kind == "applied"]
    sent = [_message(e.payload) for e in events if e.kind == "message"]
    call_ids = [str(a["call_id"]) for a in applied]
    unique = all(call_ids) and len(set(call_ids)) == len(call_ids)
    messages: list[dict[str, Any]] = [{"role": "system", "content": started["observation"]["text"]}]
    steps = []
    for call in applied:
        tool_call_id = str(call["call_id"]) if unique else f"call-{call['tick']}"
        messages.append(
            {
                "role": "assistant",
                "name": call["agent_id"],
                "content": None,
                "tool_calls": [
                    {
                        "id": tool_call_id,
                        "type": "function",
                        "function": {
                            "name": call["tool"],
                            "arguments": json.dumps(call["args"], ensure_ascii=False),
                        },
                    }
                ],
            }
        )
        text = call["text"] or (f"error: {call['error_code']}" if call["error_code"] else "")
        messages.append(
            {"role": "tool", "tool_call_id": tool_call_id, "name": call["tool"], "content": text}
        )
        reward = call["reward"]
        steps.append(
            {
                "tick": call["tick"],
                "agent_id": call["agent_id"],
                "call_id": call["call_id"],
                "tool": call["tool"],
                "round": call["round"],
                "ok": call["ok"],
                "error_code": call["error_code"],
                "minutes": call["minutes"],
                "clock": call["clock"],
                "reward": None if reward is None else reward["total"],
            }
        )
    return {
        "session_id": session.session_id,
        "episode": episode,
        "scenario_id": session.scenario_id,
        "seed": started["seed"],
        "turn_policy": config["turn_policy"],
        "reward_attribution": config["reward_attribution"],
        "reward_mode": config.get("reward_mode", "dense"),
        "team_spirit": config["team_spirit"],
        "agents": [seat_record(s, session.scenario_id, started, sent) for s in config["seats"]],
        "finished": ended is not None,
        "phase": ended["phase"] if ended is not None else "running",
        "grade": ended["grade"] if ended is not None else None,
        "agent_rewards": ended["agent_rewards"] if ended is not None else {},
        "messages": messages,
        "steps": steps,
        "rewards": [
            {
                "tick": r["tick"],
                "agent_id": r["agent_id"],
                "components": r["components"],
                "total": r["total"],
                "source_agent_id": r["source_agent_id"],
            }
            for r in (e.payload for e in events if e.kind == "reward")
        ],
    }


def seat_record(
    seat: Mapping[str, Any],
    scenario_id: str,
    started: Mapping[str, Any],
    sent: Sequence[Message] = (),
) -> dict[str, Any]:
    """One seat of an episode: as configured, and what it saw.

    `sees` is the seat's view in this episode (its own, else its scenario role's for the
    seed, else the full view), `tools` the tools it may call ([]: every tool), `page` the
    page as the seat's Joined showed it (cut to its view), `role_description` the scenario
    role's words ("" for none), `heard` the teammates' messages that reached it. An exporter
    writing a seat's conversation needs these, never the full-view page, for a restricted seat.
    """
    role = _role(scenario_id, int(started["seed"]), str(seat.get("role") or ""))
    configured = seat.get("view")
    view = (
        View.model_validate(configured)
        if configured is not None
        else role.view
        if role is not None
        else View()
    )
    tools = list(seat.get("allowed_tools") or ()) or list(role.tools if role is not None else ())
    page = views.observe(view, observation_of(started["observation"])).render()
    return {
        "agent_id": seat["agent_id"],
        "role": seat["role"],
        "allowed_tools": seat["allowed_tools"],
        "view": configured,
        "sees": view.model_dump(mode="json"),
        "tools": tools,
        "page": page,
        "role_description": role.description if role is not None else "",
        "heard": [
            {"tick": m.tick, "from_agent_id": m.sender, "text": m.text}
            for m in sent
            if m.reaches(str(seat["agent_id"]))
        ],
    }


def _message(payload: Mapping[str, Any]) -> Message:
    return Message(
        tick=int(payload["tick"]),
        sender=str(payload["sender"]),
        to=tuple(payload["to"]),
        text=str(payload["text"]),
    )


def _role(scenario_id: str, seed: int, name: str) -> RoleSpec | None:
    if not name:
        return None
    try:
        roles = resolve(scenario_id).spec(seed).roles
    except LookupError:  # a family this build no longer ships: no role to read
        return None
    return next((r for r in roles if r.name == name), None)


def calls_of(record: Mapping[str, Any]) -> list[RecordedCall]:
    """An exported episode's calls, from its chat messages, ready for `simulator.replay`."""
    rounds = [int(s["round"]) for s in record["steps"]]
    calls: list[RecordedCall] = []
    for message in record["messages"]:
        if message["role"] != "assistant":
            continue
        for tool_call in message["tool_calls"]:
            function = tool_call["function"]
            calls.append(
                RecordedCall(
                    agent_id=message["name"],
                    tool=function["name"],
                    args=json.loads(function["arguments"]),
                    round=rounds[len(calls)],
                )
            )
    return calls


def write_jsonl(records: Iterable[Mapping[str, Any]], out: TextIO) -> int:
    """Write one JSON object per line; returns how many."""
    n = 0
    for record in records:
        out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        n += 1
    return n
