"""The contract between a policy and whatever carries its tool calls (in process or a wire)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ToolReply:
    """What a policy gets back from one tool call."""

    ok: bool
    """False when the call was refused (by the world or by argument validation)."""
    text: str
    data: Mapping[str, Any] = field(default_factory=dict)
    done: bool = False
    """True once the episode has ended."""
    error: str | None = None


class ToolCaller(Protocol):
    """Carries one tool call and returns its reply."""

    def __call__(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        """Apply `tool` with `args` and return the reply."""
        ...


class Policy(Protocol):
    """Plays an episode through a ToolCaller, starting from the first observation."""

    def play(self, call: ToolCaller, observation: Mapping[str, Any]) -> None:
        """Make calls until the episode ends or the policy gives up."""
        ...


def choices(tools: Iterable[Mapping[str, Any]], tool: str, argument: str) -> tuple[str, ...]:
    """The values `argument` of `tool` may take, as the server publishes them.

    `tools`: the server's tools as ListTools serves them (the argument's JSON Schema `enum`).
    Agents see only the wire, so the report's vocabulary (submit_report's `category` and
    `remediation`) is read from there, never spelled again beside the simulator's.

    Raises:
        ValueError: `tools` serves no `tool`, or its `argument` is not a choice of values.
    """
    served = {str(t.get("name")): t for t in tools}
    if tool not in served:
        raise ValueError(f"the server serves no tool {tool!r}; it serves {', '.join(served)}")
    schema = served[tool].get("input_schema") or {}
    values = (schema.get("properties") or {}).get(argument, {}).get("enum")
    if not values:
        raise ValueError(
            f"{tool}'s argument {argument!r} is not a choice of values in its served schema;"
            f" its arguments are {', '.join(schema.get('properties') or ()) or 'none'}"
        )
    return tuple(str(v) for v in values)


__all__ = [
    "Policy",
    "ToolCaller",
    "ToolReply",
    "choices",
]
