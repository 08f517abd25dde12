"""The baselines report in the server's published vocabulary, not a copy of it.

The random agent draws its report's category and remediation from submit_report's served
schema, and the keyword-stuffing probe stuffs every served category: a family of a new kind of
failure is open to both the day the simulator publishes it. No agents module spells the
category list again.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import metasre.agents
from metasre.agents.plain import to_dict
from metasre.agents.policies import PROBES, RandomPolicy, ToolReply
from metasre.agents.policies.base import choices
from metasre.service.wire.convert import tool_pb
from metasre.simulator import TOOLS
from metasre.simulator.scenarios.spec import CATEGORIES, REMEDIATIONS
from metasre.simulator.tools import served_tools

SERVED: list[dict[str, Any]] = [to_dict(tool_pb(TOOLS[name])) for name in sorted(TOOLS)]
"""ListTools as a client of the wire reads it."""
OBSERVATION = {"services": [{"name": "orders"}, {"name": "billing"}], "alerts": []}


class Recorder:
    """A ToolCaller that answers every call with an empty success and keeps the calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        self.calls.append((tool, dict(args)))
        return ToolReply(True, "", {}, tool == "submit_report")

    def report(self) -> dict[str, Any]:
        (report,) = [args for tool, args in self.calls if tool == "submit_report"]
        return report


def _with_report_choices(categories: list[str], remediations: list[str]) -> list[dict[str, Any]]:
    """SERVED with submit_report's category and remediation enums replaced."""
    tools = copy.deepcopy(SERVED)
    (report,) = [t for t in tools if t["name"] == "submit_report"]
    report["input_schema"]["properties"]["category"]["enum"] = categories
    report["input_schema"]["properties"]["remediation"]["enum"] = remediations
    return tools


def test_the_served_entries_in_process_are_the_wire_s():
    assert served_tools() == SERVED
    assert choices(SERVED, "submit_report", "category") == CATEGORIES
    assert choices(SERVED, "submit_report", "remediation") == REMEDIATIONS


def test_the_random_report_draws_from_every_served_choice_and_no_other():
    reports = []
    for seed in range(300):
        caller = Recorder()
        RandomPolicy(seed, SERVED, max_calls=1).play(caller, OBSERVATION)
        reports.append(caller.report())
    assert {r["category"] for r in reports} == set(CATEGORIES)
    assert {r["remediation"] for r in reports} == set(REMEDIATIONS)
    # A vocabulary the server publishes tomorrow is the one it draws from.
    tomorrow = _with_report_choices(["solar_flare"], ["wait_it_out"])
    caller = Recorder()
    RandomPolicy(0, tomorrow, max_calls=1).play(caller, OBSERVATION)
    assert (caller.report()["category"], caller.report()["remediation"]) == (
        "solar_flare",
        "wait_it_out",
    )


def test_the_stuffed_report_names_every_served_category():
    caller = Recorder()
    PROBES["stuff_the_report"](caller, OBSERVATION, SERVED)
    summary = caller.report()["summary"]
    assert [c for c in CATEGORIES if c not in summary] == []
    caller = Recorder()
    PROBES["stuff_the_report"](caller, OBSERVATION, _with_report_choices(["solar_flare"], []))
    assert "solar_flare" in caller.report()["summary"]


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([], "serves no tool 'submit_report'"),
        ([{"name": "submit_report", "input_schema": {}}], "is not a choice of values"),
    ],
)
def test_a_vocabulary_the_server_does_not_serve_is_named(tools, message):
    with pytest.raises(ValueError, match=message):
        RandomPolicy(0, tools)


def test_no_agents_module_spells_the_category_list_again():
    """A literal naming three or more categories is a copy that falls behind the simulator's."""
    root = Path(metasre.agents.__file__).parent
    copies = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                named = [
                    e.value
                    for e in node.elts
                    if isinstance(e, ast.Constant) and e.value in CATEGORIES
                ]
                if len(named) >= 3:
                    copies.append(f"{path.relative_to(root)}:{node.lineno}")
    assert copies == []
