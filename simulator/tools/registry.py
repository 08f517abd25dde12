"""The tool registry: every tool by name, and argument validation against its schema."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import InvalidToolCallError, UnknownToolError
from . import (
    events,
    files,
    git,
    observe,
    operations,
    settings,
    team,
    testing,
)
from .base import Tool

TOOLS: Mapping[str, Tool] = MappingProxyType(
    {
        t.name: t
        for t in (
            *files.TOOLS,
            *observe.TOOLS,
            *events.TOOLS,
            *git.TOOLS,
            *testing.TOOLS,
            *operations.TOOLS,
            *settings.TOOLS,
            *team.TOOLS,
        )
    }
)
"""Every tool, by name."""


def served_tools() -> list[dict[str, Any]]:
    """Every tool's ListTools entry as plain data, in the order ListTools serves them (by name)."""
    return [TOOLS[name].served() for name in sorted(TOOLS)]


def get_tool(name: str) -> Tool:
    """The tool called `name`.

    Raises:
        UnknownToolError: no such tool; the message names the close matches and all choices.
    """
    tool = TOOLS.get(name)
    if tool is None:
        choices = tuple(sorted(TOOLS))
        close = difflib.get_close_matches(str(name), choices, n=2)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise UnknownToolError(
            f"unknown tool {str(name)[:64]!r}{hint}; tools are: {', '.join(choices)}",
            str(name),
            choices,
        )
    return tool


def validate_args(tool: Tool, args: Mapping[str, Any] | None) -> BaseModel:
    """Check `args` against the tool's argument model.

    Raises:
        InvalidToolCallError: with one (field, description) violation per problem.
    """
    if args is not None and not isinstance(args, Mapping):
        raise InvalidToolCallError(
            f"{tool.name}: arguments must be an object, not {type(args).__name__}",
            tool.name,
            (("", "arguments must be an object"),),
        )
    try:
        return tool.args.model_validate(dict(args or {}))
    except ValidationError as exc:
        violations = tuple(
            (".".join(str(p) for p in err["loc"]) or "(arguments)", _describe(err))
            for err in exc.errors(include_url=False)
        )
        listing = "; ".join(f"{f}: {d}" for f, d in violations)
        raise InvalidToolCallError(
            f"{tool.name}: invalid arguments: {listing}", tool.name, violations
        ) from None


def _describe(err: Mapping[str, Any]) -> str:
    msg = str(err.get("msg", "invalid"))
    ctx = err.get("ctx") or {}
    if err.get("type") == "literal_error" and "expected" in ctx:
        return f"{msg} (allowed: {ctx['expected']})"
    if err.get("type") == "extra_forbidden":
        return "unknown argument; see the tool's schema for the allowed ones"
    return msg
