"""The text side of the environments, with no dependency: escapes, numbers, JSON tool calls.

An observation's text is escaped to `CHARSET` (printable ASCII: PettingZoo's `api_test` checks
every character, and log lines carry non-ASCII) and cut to a length; its numbers (`FEATURES`)
are plain floats; an action is one JSON tool call, `{"tool": NAME, "args": {...}}` (or the
chat-completions shape `{"name": NAME, "arguments": {...} or "<JSON>"}`), and text that is not
one is a `MalformedAction` whose message is the error observation. The Gymnasium spaces
(`metasre.agents.env_spaces`, the `gym` extra) are built on this; the TRL and SkyRL adapters
use it alone, so they need neither gymnasium nor numpy.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from typing import Any

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


def feature_values(
    observation: Mapping[str, Any], *, last_call_ok: bool = False, new_messages: int = 0
) -> tuple[float, ...]:
    """The numbers of a wire observation (plain data), in `FEATURES` order, within `BOUND`."""
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
    return tuple(min(max(values[name], -BOUND), BOUND) for name in FEATURES)


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
    "escape",
    "feature_values",
    "parse_action",
]
