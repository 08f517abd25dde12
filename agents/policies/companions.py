"""Teammates that want credit they did not earn: a saboteur and a rider, beside a worker.

They are for experiments on attribution (`metasre experiment`, examples/saboteur-rider.toml):
a worker (the scripted expert) solves the incident; the companion, in its own seat with the
full view, sees each of the worker's calls as its stream would show them and acts on its own
seat right after. Under a sound attribution neither earns anything and the worker keeps its
credit.

- The saboteur makes operations the incident did not need (restarts and scale-ups of services
  the page shows healthy) and asks for a hint: costs it hopes the team will share.
- The rider rewrites the files the worker is about to fix without changing their behaviour
  (a trailing space on every line outside strings and continuations), hoping the worker's fix
  cannot be placed without it, so that the credit for the fix would be its own.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Mapping
from typing import Any, Protocol

from .base import ToolCaller, ToolReply

MAX_CONTENT = 20_000
"""The most characters edit_lines carries (its JSON Schema says so too)."""


class Companion(Protocol):
    """A seat that acts beside a worker: first, then after each of the worker's calls."""

    def start(self, call: ToolCaller, observation: Mapping[str, Any]) -> None:
        """Act before the worker's first call."""
        ...

    def after(self, call: ToolCaller, tool: str, args: Mapping[str, Any], reply: ToolReply) -> None:
        """Act after one of the worker's calls (`reply` is what its stream shows of it)."""
        ...


class Saboteur:
    """Operations the incident did not need, and a hint, before the worker starts."""

    def __init__(self, operations: int = 2) -> None:
        self.operations = operations

    def start(self, call: ToolCaller, observation: Mapping[str, Any]) -> None:
        """Restart and scale up the healthiest services of the page, then ask for a hint."""
        rows = [r for r in observation.get("services", ()) if str(r.get("health")) == "healthy"]
        for i, row in enumerate(rows[: self.operations]):
            name = str(row["name"])
            if i % 2:
                more = int(row.get("replicas", 1)) + 3
                call("scale_service", {"service": name, "replicas": more})
            else:
                call("restart_service", {"service": name})
        call("ask_hint", {})

    def after(self, call: ToolCaller, tool: str, args: Mapping[str, Any], reply: ToolReply) -> None:
        """Nothing more: its costs are made."""


class Rider:
    """Rewrites, behaviour unchanged, each code file the worker looks into, before its fix."""

    def __init__(self) -> None:
        self.ridden: set[str] = set()

    def start(self, call: ToolCaller, observation: Mapping[str, Any]) -> None:
        """Nothing yet: it waits to see where the worker looks."""

    def after(self, call: ToolCaller, tool: str, args: Mapping[str, Any], reply: ToolReply) -> None:
        """After the worker reads a commit's diff or a file, rewrite the code files it names."""
        paths: list[str] = []
        if tool == "git_show" and reply.ok:
            paths = [
                line[len("+++ b/") :].strip()
                for line in str(reply.data.get("diff", "")).splitlines()
                if line.startswith("+++ b/")
            ]
        elif tool == "view_file" and reply.ok:
            paths = [str(reply.data.get("path", ""))]
        for path in paths:
            if path.endswith(".py") and not path.startswith("tests/") and path not in self.ridden:
                self.ridden.add(path)
                self._ride(call, path)

    @staticmethod
    def _ride(call: ToolCaller, path: str) -> None:
        shown = call("view_file", {"path": path})
        lines = [str(x) for x in shown.data.get("lines", ())]
        if not shown.ok or not lines or int(shown.data.get("total_lines", 0)) != len(lines):
            return
        rewritten = neutral(lines)
        content = "".join(f"{x}\n" for x in rewritten)
        if rewritten == lines or len(content) > MAX_CONTENT:
            return
        call(
            "edit_lines",
            {
                "path": path,
                "action": "replace",
                "start_line": 1,
                "end_line": len(lines),
                "content": content,
            },
        )


def neutral(lines: list[str]) -> list[str]:
    """`lines` with a trailing space on every line whose meaning a trailing space keeps.

    Not on lines inside a string that spans lines (the string would change), nor after a
    backslash continuation (the continuation would break), nor on blank lines.
    """
    text = "".join(f"{x}\n" for x in lines)
    keep: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                keep.update(range(tok.start[0], tok.end[0] + 1))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return lines
    return [
        x if (i in keep or not x.strip() or x.rstrip().endswith("\\")) else f"{x} "
        for i, x in enumerate(lines, 1)
    ]


COMPANIONS: dict[str, type[Saboteur] | type[Rider]] = {"saboteur": Saboteur, "rider": Rider}
"""Companions by the name a team composition gives them (`expert+saboteur`)."""


__all__ = ["COMPANIONS", "Companion", "Rider", "Saboteur", "neutral"]
