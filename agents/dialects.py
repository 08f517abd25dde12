"""One seat's conversation in the formats trainers read: OpenAI fine-tuning, Hugging Face, ATIF.

Each takes a seat's conversation (`{"messages", "tools"}`, as `metasre.agents.transcripts`
gives it) and the exported episode it belongs to (plain data):

- `openai_line`: the chat fine-tuning line, `{"messages", "tools"}` and nothing else (the
  endpoint refuses extra keys); each message keeps only the keys its role has in the chat
  format; tool-call arguments stay the JSON text the model emitted.
- `hf_row`: the same messages plus the columns a `datasets` user filters and weighs by:
  episode and seat ids, scenario, seed, split (train or test; null for a family unknown to
  the exporter), grade, the seat's reward and its components.
  `tools` is a JSON string (tool schemas differ too much for one Arrow type).
- `atif_trajectory`: an Agent Trajectory Interchange Format (v1.8) document for the seat:
  system and user turns as steps, each assistant reply with its tool calls and their results
  as one agent step; arguments that are not a JSON object keep their text in the call's
  `extra`; rewards and the grade in `extra` and `final_metrics.extra` (ATIF has no reward).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

ATIF_VERSION = "ATIF-v1.8"
_KEYS = {
    "system": ("role", "content"),
    "user": ("role", "content"),
    "assistant": ("role", "content", "tool_calls"),
    "tool": ("role", "tool_call_id", "content"),
}
"""The keys each role's message has in the chat fine-tuning format (name and weight unused)."""


def openai_line(conversation: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenAI chat fine-tuning line of one seat's conversation."""
    return {
        "messages": [_chat_message(m) for m in conversation["messages"]],
        "tools": list(conversation["tools"]),
    }


def _chat_message(message: Mapping[str, Any]) -> dict[str, Any]:
    role = str(message["role"])
    out = {k: message[k] for k in _KEYS[role] if k in message}
    if "tool_calls" in out:
        out["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {
                    "name": c["function"]["name"],
                    "arguments": c["function"]["arguments"],
                },
            }
            for c in out["tool_calls"]
        ]
    return out


def seat_reward(record: Mapping[str, Any], agent_id: str) -> dict[str, float]:
    """The seat's reward over the episode, by component (they add up to `agent_rewards`)."""
    total: dict[str, float] = {}
    for reward in record.get("rewards") or ():
        if reward["agent_id"] == agent_id:
            for name, value in reward["components"].items():
                total[name] = round(total.get(name, 0.0) + float(value), 9)
    return total


def hf_row(
    record: Mapping[str, Any], agent_id: str, conversation: Mapping[str, Any], split: str | None
) -> dict[str, Any]:
    """One row of the Hugging Face dataset: a seat-episode (see the module docstring)."""
    grade = record.get("grade") or {}
    seat = next(a for a in record["agents"] if a["agent_id"] == agent_id)
    return {
        "messages": openai_line(conversation)["messages"],
        "tools": json.dumps(conversation["tools"], ensure_ascii=False),
        "episode_id": f"{record['session_id']}/{record['episode']}",
        "session_id": record["session_id"],
        "episode": record["episode"],
        "agent_id": agent_id,
        "role": seat.get("role") or "",
        "scenario_id": record["scenario_id"],
        "seed": record["seed"],
        "split": split,
        "turn_policy": record["turn_policy"],
        "reward_attribution": record["reward_attribution"],
        "reward_mode": record["reward_mode"],
        "phase": record["phase"],
        "grade": float(grade.get("total", 0.0)),
        "resolved": bool(grade.get("resolved", False)),
        "grade_components": [
            {"name": c["name"], "score": c["score"], "value": c["value"]}
            for c in grade.get("components") or ()
        ],
        "reward": float((record.get("agent_rewards") or {}).get(agent_id, 0.0)),
        "reward_components": [
            {"name": name, "value": value}
            for name, value in sorted(seat_reward(record, agent_id).items())
        ],
    }


def atif_trajectory(
    record: Mapping[str, Any],
    agent_id: str,
    conversation: Mapping[str, Any],
    *,
    agent_name: str,
    agent_version: str,
    model: str = "",
) -> dict[str, Any]:
    """One seat's ATIF trajectory (a plain dict; `atif.Trajectory` validates it)."""
    steps: list[dict[str, Any]] = []
    messages = list(conversation["messages"])
    i = 0
    while i < len(messages):
        message = messages[i]
        i += 1
        role = message["role"]
        if role in ("system", "user"):
            steps.append({"source": role, "message": str(message.get("content") or "")})
            continue
        if role == "tool":  # a result with no call before it: the system said it
            steps.append({"source": "system", "message": str(message.get("content") or "")})
            continue
        step: dict[str, Any] = {"source": "agent", "message": str(message.get("content") or "")}
        calls = message.get("tool_calls") or []
        if calls:
            step["tool_calls"] = [_atif_call(c) for c in calls]
            ids = {c["id"] for c in calls}
            results = []
            while i < len(messages) and messages[i]["role"] == "tool":
                answer = messages[i]
                i += 1
                source = answer.get("tool_call_id")
                results.append(
                    {
                        "source_call_id": source if source in ids else None,
                        "content": str(answer.get("content") or ""),
                    }
                )
            if results:
                step["observation"] = {"results": results}
        if model:
            step["model_name"] = model
        steps.append(step)
    for number, step in enumerate(steps, 1):
        step["step_id"] = number
    grade = record.get("grade") or {}
    seat = next(a for a in record["agents"] if a["agent_id"] == agent_id)
    reward = float((record.get("agent_rewards") or {}).get(agent_id, 0.0))
    agent: dict[str, Any] = {
        "name": agent_name,
        "version": agent_version,
        "tool_definitions": list(conversation["tools"]),
        "extra": {"seat": agent_id, "role": seat.get("role") or "", "view": seat.get("sees")},
    }
    if model:
        agent["model_name"] = model
    return {
        "schema_version": ATIF_VERSION,
        "session_id": f"{record['session_id']}/{record['episode']}",
        "trajectory_id": f"{record['session_id']}/{record['episode']}/{agent_id}",
        "agent": agent,
        "steps": steps,
        "final_metrics": {
            "total_steps": len(steps),
            "extra": {
                "reward": reward,
                "reward_components": seat_reward(record, agent_id),
                "grade": float(grade.get("total", 0.0)),
                "resolved": bool(grade.get("resolved", False)),
            },
        },
        "extra": {
            "scenario_id": record["scenario_id"],
            "seed": record["seed"],
            "episode": record["episode"],
            "phase": record["phase"],
        },
    }


def _atif_call(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call["function"]
    text = function.get("arguments")
    out: dict[str, Any] = {"tool_call_id": call["id"], "function_name": function["name"]}
    try:
        arguments = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        arguments = None
    if isinstance(arguments, dict):
        out["arguments"] = arguments
    else:  # malformed: ATIF wants an object; the text the model emitted is kept beside it
        out["arguments"] = {}
        out["extra"] = {"raw_arguments": text, "malformed": True}
    return out


__all__ = ["ATIF_VERSION", "atif_trajectory", "hf_row", "openai_line", "seat_reward"]
