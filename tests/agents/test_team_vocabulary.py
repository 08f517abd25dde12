"""The scripted teams speak the server's published vocabulary, not a copy of it.

Every tool a team calls and every argument it sends is one ListTools publishes; its remedy
table names a served tool for each `category` of submit_report's schema, no more and no fewer;
and what a remedy needs of a view is read from the tool's served `needs`.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

import metasre.agents.policies.team as team
from metasre.agents.plain import to_dict
from metasre.agents.policies.team import REMEDY, RoleSeat, SeatView
from metasre.agents.policies.team.seats import CODE_REMEDY
from metasre.service.wire.convert import tool_pb
from metasre.simulator import TOOLS

SERVED: dict[str, dict[str, Any]] = {t.name: to_dict(tool_pb(t)) for t in TOOLS.values()}
"""ListTools as a client reads it."""
TEAM = Path(team.__file__).parent


def _calls() -> list[tuple[str, int, str, list[str]]]:
    """(file, line, tool, argument names) of every call the team modules spell out.

    A call is `call("tool", {...})` (any callee named `call`) or a look `("tool", {...})`.
    """
    found = []
    for path in sorted(TEAM.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            pair: list[ast.expr] = []
            if isinstance(node, ast.Call):
                callee = node.func
                name = (
                    callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
                )
                if name == "call":
                    pair = list(node.args[:2])
            elif isinstance(node, ast.Tuple):
                pair = list(node.elts)
            if len(pair) != 2 or not isinstance(pair[1], ast.Dict):
                continue
            tool = pair[0]
            if not (isinstance(tool, ast.Constant) and isinstance(tool.value, str)):
                continue
            keys = [k.value for k in pair[1].keys if isinstance(k, ast.Constant)]
            found.append((path.name, node.lineno, tool.value, keys))
    return found


def test_every_call_the_teams_spell_out_is_a_served_tool_with_served_arguments():
    calls = _calls()
    # the scan sees the calls: the trio's looks, the messages, the role seats' reads
    assert {"send_message", "read_logs", "query_metrics", "describe_service"} <= {
        tool for _, _, tool, _ in calls
    }
    wrong = [
        f"{where}:{line}: {tool}({', '.join(args)})"
        for where, line, tool, args in calls
        if tool not in SERVED
        or not set(args) <= set(SERVED[tool]["input_schema"].get("properties", {}))
    ]
    assert wrong == []


def test_the_remedy_table_covers_exactly_the_published_categories_with_served_tools():
    schema = SERVED["submit_report"]["input_schema"]
    categories = set(schema["properties"]["category"]["enum"])
    assert set(REMEDY) == categories
    assert {*REMEDY.values(), CODE_REMEDY} <= set(SERVED)


@pytest.mark.parametrize("category", sorted(REMEDY))
def test_what_a_remedy_needs_of_a_view_is_the_served_tool_s(category):
    tool = SERVED[REMEDY[category]]
    for system in ("code", "data", "deploys"):
        blind = RoleSeat("seat", SeatView(("orders",), **{system: False}))
        assert blind.can_fix("orders", category, SERVED) == (system not in tool["needs"])
    # with the trait taken away, the seat may: the rule is read from the served spec
    freed = {**SERVED, tool["name"]: {**tool, "needs": []}}
    for system in ("code", "data", "deploys"):
        blind = RoleSeat("seat", SeatView(("orders",), **{system: False}))
        assert blind.can_fix("orders", category, freed)
