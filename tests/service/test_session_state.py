"""A session's state is changed only through its own methods (and its seats').

`Session` and `Seat` keep the invariants of an episode (a reset clears every seat's totals and
kept results with the calls; a recovery restores the number, seed and calls together): a module
that wrote their attributes itself could leave one of them stale. This scans every module of
the service for a write to one of their attributes from outside `core/session.py`.
"""

from __future__ import annotations

import ast
from pathlib import Path

SERVICE = Path(__file__).resolve().parents[2] / "service"
HOME = SERVICE / "core" / "session.py"
MUTATORS = {
    "append", "extend", "insert", "clear", "pop", "popitem", "update", "add", "remove",
    "discard", "setdefault",
}  # fmt: skip
"""Methods that change a list, dict or set in place."""


def _attributes() -> set[str]:
    """The attributes a Session or a Seat sets on itself (its fields included)."""
    names = set()
    for node in ast.walk(ast.parse(HOME.read_text())):
        if isinstance(node, ast.ClassDef) and node.name in ("Session", "Seat"):
            for n in ast.walk(node):
                if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
                    names.add(n.target.id)
                if (
                    isinstance(n, ast.Attribute)
                    and isinstance(n.ctx, ast.Store)
                    and isinstance(n.value, ast.Name)
                    and n.value.id == "self"
                ):
                    names.add(n.attr)
    return names


def _writes(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, target) of each write to `obj.<name>` where obj is not `self`: an assignment,
    an augmented one, a `del`, or a call of a mutating method, to it or an item of it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
        ):
            targets = [node.func.value]
        for target in targets:
            for one in target.elts if isinstance(target, ast.Tuple) else [target]:
                while isinstance(one, ast.Subscript):
                    one = one.value
                if (
                    isinstance(one, ast.Attribute)
                    and one.attr in names
                    and not (isinstance(one.value, ast.Name) and one.value.id == "self")
                ):
                    found.append((node.lineno, ast.unparse(one)))
    return found


def test_nothing_outside_the_session_writes_its_state():
    names = _attributes()
    assert {"calls", "episode_no", "turn_agent_id", "reward_total", "results", "queued"} <= names
    wrong = [
        f"{path.relative_to(SERVICE)}:{line}: {target}"
        for path in sorted(SERVICE.rglob("*.py"))
        if path != HOME
        for line, target in _writes(path.read_text(), names)
    ]
    assert wrong == []


def test_the_scan_sees_the_writes_it_forbids():
    source = """
s.episode_no += 1
s.seed, s.episode = 3, None
self.session.turn_agent_id = "a"
seat.results[call_id] = entry
del seat.queued[call_id]
s.calls.append(call)
for seat in s.seats:
    seat.results.clear()
self.calls = []
"""
    assert [target for _, target in _writes(source, _attributes())] == [
        "s.episode_no",
        "s.seed",
        "s.episode",
        "self.session.turn_agent_id",
        "seat.results",
        "seat.queued",
        "s.calls",
        "seat.results",
    ]
