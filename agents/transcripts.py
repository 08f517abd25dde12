"""What a model saw, per seat: recorded by `metasre llm`, or derived from a stored episode.

A transcript is one seat's conversation in one episode, exactly as the chat endpoint got it:
the system prompt and the page (user turn), each assistant reply with its tool calls as
emitted (arguments as the model's JSON text, malformed ones included), each tool message with
the error the model was answered with, teammates' messages and nudges as user turns, and the
`tools` list the requests carried. One JSON object per line::

    {"session_id", "episode", "agent_id", "role", "scenario_id", "seed", "model",
     "tools": [chat-completions tools], "messages": [chat-completions messages]}

A seat that no model played (a scripted agent) has no transcript; `derived_conversation`
writes the conversation `metasre llm` would have had, had its model made the same calls: the
same prompts (the seat's role, its view, its tools), the seat's own page (cut to its view),
its calls with the server's arguments, their results and refusals in the agent's words, and
the teammates' messages that reached it, each before the seat's next call. Never another
seat's calls, results or page.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .llm import (
    ROLE_DUTIES,
    LLMConfig,
    LLMPolicy,
    heard_message,
    page_message,
    refusal_text,
)
from .llm_team import RoleLLMPolicy
from .policies.base import ToolReply
from .policies.team import RoleSeat, SeatView

Key = tuple[str, int, str]
"""(session id, episode, agent id): one seat's part of one episode."""


def transcript(
    policy: LLMPolicy,
    *,
    session_id: str,
    episode: int,
    agent_id: str,
    scenario_id: str,
    seed: int,
) -> dict[str, Any]:
    """One seat's transcript from the policy that played it (its conversation as sent)."""
    return {
        "session_id": session_id,
        "episode": episode,
        "agent_id": agent_id,
        "role": policy.role,
        "scenario_id": scenario_id,
        "seed": seed,
        "model": policy.config.model,
        "tools": policy.tools,
        "messages": policy.messages,
    }


def append_transcripts(path: Path, records: Iterable[Mapping[str, Any]]) -> int:
    """Append records to a JSONL file (made if missing); returns how many.

    Raises:
        OSError: the file cannot be written.
    """
    n = 0
    with path.open("a", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
            n += 1
    return n


def read_transcripts(path: Path) -> dict[Key, dict[str, Any]]:
    """Every transcript of a JSONL file, by (session, episode, agent); later lines win.

    Raises:
        OSError: the file cannot be read.
        ValueError: a line is not a transcript; the message names the line.
    """
    found: dict[Key, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                key = (str(record["session_id"]), int(record["episode"]), str(record["agent_id"]))
                if not isinstance(record["messages"], list) or not isinstance(
                    record["tools"], list
                ):
                    raise TypeError("messages and tools must be lists")
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{number} is not a transcript ({exc})") from None
            found[key] = record
    return found


def derived_conversation(
    record: Mapping[str, Any], agent_id: str, tools: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The conversation `metasre llm` would have had in `agent_id`'s seat; see the docstring.

    `record` is an exported episode (`metasre.service.episodes`, plain data); `tools` the
    server's tools as ListTools gives them.
    """
    seats = {str(a["agent_id"]): a for a in record["agents"]}
    seat = seats[agent_id]
    allowed = set(seat.get("tools") or ())
    policy = _prompter(seat, list(seats.values()), [t for t in tools if _allowed(t, allowed)])
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": policy.system_prompt()},
        page_message(str(seat["page"])),
    ]
    heard = sorted(seat.get("heard") or (), key=lambda m: int(m["tick"]))
    assistant = (m for m in record["messages"] if m["role"] == "assistant")
    answers = {m["tool_call_id"]: m for m in record["messages"] if m["role"] == "tool"}
    number = 0
    for step, message in zip(record["steps"], assistant, strict=True):
        if step["agent_id"] != agent_id:
            continue
        # What reached the seat before this call joins the conversation before it, as the
        # agent adds teammates' messages before each request.
        while heard and int(heard[0]["tick"]) < int(step["tick"]):
            messages.append(heard_message(heard.pop(0)))
        (call,) = message["tool_calls"]
        number += 1
        call_id = f"call_{number}"
        function = call["function"]
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": function["name"],
                            "arguments": json.dumps(json.loads(function["arguments"])),
                        },
                    }
                ],
            }
        )
        text = str(answers[call["id"]]["content"])
        if not step["ok"]:
            reply = ToolReply(False, text, {}, False, step["error_code"] or None)
            text = refusal_text(function["name"], reply)
        messages.append({"role": "tool", "tool_call_id": call_id, "content": text})
    return {"messages": messages, "tools": policy.tools}


def _allowed(tool: Mapping[str, Any], allowed: set[str]) -> bool:
    return not allowed or str(tool["name"]) in allowed


def _prompter(
    seat: Mapping[str, Any], seats: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
) -> LLMPolicy:
    """The policy `metasre llm` (or `llm --team`) would have seated here, for its prompt."""
    config = LLMConfig(base_url="", model="")
    role = str(seat.get("role") or "")
    names = [str(s["agent_id"]) for s in seats]
    if not role:
        return LLMPolicy(config, tools)
    if role in ROLE_DUTIES:  # the generalist team: commander, investigator, fixer
        return LLMPolicy(config, tools, role=role, seats=names)
    team = [_role_seat(s) for s in seats]
    me = next(s for s in team if s.name == str(seat["agent_id"]))
    return RoleLLMPolicy(config, tools, seat=me, team=team)


def _role_seat(seat: Mapping[str, Any]) -> RoleSeat:
    return RoleSeat(
        name=str(seat["agent_id"]),
        view=SeatView.of(seat.get("sees")),
        tools=tuple(seat.get("tools") or ()),
        description=str(seat.get("role_description") or ""),
    )


__all__ = [
    "Key",
    "append_transcripts",
    "derived_conversation",
    "read_transcripts",
    "transcript",
]
