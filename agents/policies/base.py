"""The contract between a policy and whatever carries its tool calls (in process or a wire)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

# The report's vocabulary as the protocol documents it (submit_report's JSON Schema); agents
# keep their own copy because they see only the wire.
CATEGORIES: tuple[str, ...] = (
    "code_bug",
    "data_corruption",
    "resource_leak",
    "bad_migration",
    "security",
    "bad_deployment",
    "capacity",
    "crash_loop",
)
REMEDIATIONS: tuple[str, ...] = (
    "code_fix",
    "rollback_deployment",
    "rollback_migration",
    "restart_service",
    "scale_service",
)


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


__all__ = [
    "CATEGORIES",
    "REMEDIATIONS",
    "Policy",
    "ToolCaller",
    "ToolReply",
]
