"""The spaces of the Gymnasium and PettingZoo adapters: text observations, JSON tool calls.

An observation is a `Dict` of a small numeric vector (`FEATURES`, float32) beside the text an
LLM would read, escaped to the declared charset (printable ASCII: PettingZoo's `api_test` checks
every character, and log lines carry non-ASCII). An action is `Text`: one JSON tool call,
`{"tool": NAME, "args": {...}}` (or the chat-completions shape `{"name": NAME, "arguments":
{...} or "<JSON>"}`). Text that is not such a call is parsed into an error, never an exception.
Needs the `gym` extra (gymnasium, numpy).
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

CHARSET = string.printable
"""The text's characters: printable ASCII with tab and newline. Others become JSON escapes."""
_ALLOWED = frozenset(CHARSET)

FEATURES = (
    "minute",
    "sla_minutes_left",
    "steps_left",
    "step_budget",
    "alerts",
    "p1_alerts",
    "unhealthy_services",
    "services",
    "last_call_ok",
    "new_messages",
)
"""The numeric vector, in order. `last_call_ok` is 1 when the seat's last action was applied
and accepted by the world, 0 otherwise (and at the page)."""

BOUND = 1e6
"""The vector's bounds (minutes, steps and counts stay far inside; values are clipped)."""

OBSERVATION_TEXT_LENGTH = 32_768
"""Characters of text per observation; a longer text is cut with a note of what was cut."""
ACTION_TEXT_LENGTH = 8_192
"""Characters of one action (a whole-file edit fits)."""


def observation_space(text_length: int = OBSERVATION_TEXT_LENGTH) -> spaces.Dict:
    """The observation space: `{"observation": Box(float32, FEATURES), "text": Text}`."""
    return spaces.Dict(
        {
            "observation": spaces.Box(-BOUND, BOUND, shape=(len(FEATURES),), dtype=np.float32),
            "text": spaces.Text(text_length, min_length=0, charset=CHARSET),
        }
    )


class ToolCallText(spaces.Text):
    """`Text` of one JSON tool call; `sample()` draws well-formed looks half the time.

    A uniformly random string is never a tool call, so an environment checker sampling the
    action space would exercise only the malformed path. Half of the samples are instead a
    call to one of `calls` (the tools that need no argument and only look), so the checkers
    play real calls against the server too. `contains` is Text's: any string of the charset.
    """

    def __init__(
        self, calls: Sequence[str], max_length: int = ACTION_TEXT_LENGTH, seed: int | None = None
    ) -> None:
        super().__init__(max_length, min_length=0, charset=CHARSET, seed=seed)
        self.calls = tuple(calls)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """A well-formed look (half the time) or a random string of the charset."""
        if mask is None and probability is None and self.calls and self.np_random.random() < 0.5:
            return str(self.calls[int(self.np_random.integers(len(self.calls)))])
        return str(super().sample(mask, probability))


def look_calls(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """JSON calls of the tools (from ListTools) that only look and need no argument."""
    return [
        json.dumps({"tool": t["name"], "args": {}})
        for t in tools
        if t.get("kind") == "investigate" and not (t.get("input_schema") or {}).get("required")
    ]


def escape(text: str, limit: int = OBSERVATION_TEXT_LENGTH) -> str:
    """`text` within the charset (JSON-style escapes) and `limit` characters (cut with a note)."""
    out = "".join(c if c in _ALLOWED else _escaped(c) for c in text)
    if len(out) <= limit:
        return out
    keep = max(limit - 48, 0)  # room for the note, whose number has at most 20 digits
    return (out[:keep] + f"\n[... {len(out) - keep} more characters cut]")[:limit]


def _escaped(c: str) -> str:
    # As JSON writes it with ensure_ascii (a surrogate pair beyond the BMP), so that a reader
    # can undo it with a JSON decoder.
    return json.dumps(c)[1:-1]


def features(
    observation: Mapping[str, Any], *, last_call_ok: bool = False, new_messages: int = 0
) -> NDArray[np.float32]:
    """The numeric vector of a wire observation (the `Observation` message as plain data)."""
    alerts = list(observation.get("alerts") or ())
    services = list(observation.get("services") or ())
    values = {
        "minute": float(observation.get("minute") or 0.0),
        "sla_minutes_left": float(observation.get("sla_minutes_left") or 0.0),
        "steps_left": float(observation.get("steps_left") or 0),
        "step_budget": float(observation.get("step_budget") or 0),
        "alerts": float(len(alerts)),
        "p1_alerts": float(sum(1 for a in alerts if a.get("severity") == "P1")),
        "unhealthy_services": float(sum(1 for s in services if s.get("health") != "healthy")),
        "services": float(len(services)),
        "last_call_ok": 1.0 if last_call_ok else 0.0,
        "new_messages": float(new_messages),
    }
    vector = np.array([values[name] for name in FEATURES], dtype=np.float32)
    return np.clip(vector, -BOUND, BOUND).astype(np.float32)


class MalformedAction(ValueError):
    """An action that is not a tool call; its text is the error observation the seat gets."""


def parse_action(action: Any) -> tuple[str, dict[str, Any]]:
    """The (tool, arguments) of one action.

    Raises:
        MalformedAction: the action is not a JSON tool call; the message says what is allowed.
    """
    shape = 'an action is one JSON tool call: {"tool": "read_logs", "args": {"service": "..."}}'
    if not isinstance(action, str):
        raise MalformedAction(f"ERROR: {shape}; got a {type(action).__name__}, not text")
    try:
        call = json.loads(action)
    except json.JSONDecodeError as exc:
        raise MalformedAction(f"ERROR: the action is not JSON ({exc}); {shape}") from None
    if not isinstance(call, dict):
        raise MalformedAction(f"ERROR: {shape}; got JSON {type(call).__name__}, not an object")
    tool = call.get("tool", call.get("name"))
    args: Any = call.get("args", call.get("arguments", {}))
    if isinstance(args, str):  # the chat-completions shape: the arguments' JSON text
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            raise MalformedAction(f"ERROR: the arguments are not JSON ({exc}); {shape}") from None
    if not isinstance(tool, str) or not tool:
        raise MalformedAction(f'ERROR: the call names no tool (a "tool" string); {shape}')
    if not isinstance(args, dict):
        raise MalformedAction(
            f"ERROR: the arguments of {tool} must be a JSON object, got {type(args).__name__}"
        )
    extra = sorted(set(call) - {"tool", "args", "name", "arguments"})
    if extra:
        raise MalformedAction(
            f"ERROR: unknown keys {', '.join(extra)} in the call; allowed: tool and args "
            "(or name and arguments)"
        )
    return tool, args


__all__ = [
    "ACTION_TEXT_LENGTH",
    "BOUND",
    "CHARSET",
    "FEATURES",
    "OBSERVATION_TEXT_LENGTH",
    "MalformedAction",
    "ToolCallText",
    "escape",
    "features",
    "look_calls",
    "observation_space",
    "parse_action",
]
