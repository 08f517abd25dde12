"""A tool's behaviour has one home: its traits and effects, never its name compared elsewhere."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from metasre.simulator import TOOLS, Episode, scenario_ids
from metasre.simulator.episode import StepResult

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("simulator", "service", "cli")
"""The layers that act on calls. Agents see only the wire (ListTools' `kind`), and the tools,
scenario data and policies call tools by name, which is what names are for."""
EXEMPT = (ROOT / "simulator" / "tools",)

_CONTAINERS = {"frozenset", "set", "tuple", "list"}


def _strings(node: ast.AST, names: dict[str, set[str]]) -> set[str]:
    """The string literals `node` stands for: a literal, a container of them, or a module
    constant bound to one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Name):
        return names.get(node.id, set())
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(_strings(e, names) for e in node.elts))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        return _strings(node.args[0], names) if node.func.id in _CONTAINERS else set()
    return set()


def tool_name_comparisons(source: str) -> list[tuple[int, str]]:
    """(line, tool name) of each comparison (==, !=, in, not in) against a tool's name."""
    tree = ast.parse(source)
    constants: dict[str, set[str]] = {}
    for stmt in tree.body:
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else [stmt.target]
            if isinstance(stmt, ast.AnnAssign) and stmt.value is not None
            else []
        )
        value = getattr(stmt, "value", None)
        for target in targets:
            if isinstance(target, ast.Name) and value is not None:
                constants[target.id] = _strings(value, {})
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                for name in sorted(_strings(operand, constants) & TOOLS.keys()):
                    found.append((node.lineno, name))
    return found


def _modules() -> Iterator[Path]:
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            if any(path.is_relative_to(e) for e in EXEMPT):
                continue
            rel = path.relative_to(ROOT / top)
            # A scenario folder's own code (its services, its probes) is data, not the engine.
            if top == "simulator" and rel.parts[0] == "scenarios" and len(rel.parts) > 2:
                continue
            if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
                continue
            yield path


def test_the_scan_finds_what_it_looks_for():
    source = (
        'QUICK = frozenset({"get_alerts", "read_logs"})\n'
        'REPORT = "submit_report"\n'
        "def f(tool, step):\n"
        '    if tool == "edit_lines": pass\n'
        "    if tool in QUICK: pass\n"
        "    if step.tool != REPORT: pass\n"
        '    if tool in ("restart_service", "x"): pass\n'
        '    if tool == "not_a_tool": pass\n'
    )
    assert tool_name_comparisons(source) == [
        (4, "edit_lines"),
        (5, "get_alerts"),
        (5, "read_logs"),
        (6, "submit_report"),
        (7, "restart_service"),
    ]


def test_no_layer_outside_the_tools_switches_on_a_tool_name():
    scanned = list(_modules())
    assert len(scanned) > 50  # the scan sees the code it is meant to
    found = [
        f"{path.relative_to(ROOT)}:{line} compares with {name!r}"
        for path in scanned
        for line, name in tool_name_comparisons(path.read_text(encoding="utf-8"))
    ]
    assert not found, "ask the tool's traits or its output's effects instead:\n" + "\n".join(found)


QUICK_BEFORE_TRAITS = {
    "list_files",
    "view_file",
    "read_logs",
    "query_metrics",
    "get_alerts",
    "check_dependencies",
    "describe_service",
    "git_log",
    "git_show",
    "git_blame",
    "git_diff",
    "send_message",
}
"""The service's quick-path list the `inline` trait replaced."""


def test_the_inline_tools_are_the_quick_list_they_replaced_and_the_new_looks():
    inline = {t.name for t in TOOLS.values() if t.inline}
    assert inline == QUICK_BEFORE_TRAITS | {"get_events", "get_config"}


def test_the_traits_are_consistent():
    for tool in TOOLS.values():
        # Inline means on the service's event loop: nothing that runs tests, changes the
        # world or ends (and grades) the episode.
        if tool.inline:
            assert tool.read_only and not tool.ends_episode, tool.name
        assert tool.read_only != (tool.changes_code or tool.operates), tool.name
    assert [t.name for t in TOOLS.values() if t.ends_episode] == ["submit_report"]
    assert [t.name for t in TOOLS.values() if t.sends_message] == ["send_message"]


def _check_effects(step: StepResult) -> None:
    tool, out = TOOLS[step.tool], step.output
    where = f"{step.tool} {dict(step.args)}"
    if not out.ok:
        assert (out.operation, out.message, out.report, out.command) == (None,) * 4, where
        assert out.patch is None, where
        assert not out.hint and out.syntax_error is None, where
        return
    assert (out.operation is not None) == tool.operates, where
    assert (out.message is not None) == tool.sends_message, where
    assert (out.report is not None) == tool.ends_episode == step.done, where
    assert out.syntax_error is None or tool.changes_code, where
    assert (out.patch is not None) == tool.changes_code, where


def _calls(episode: Episode) -> list[tuple[str, dict[str, Any]]]:
    service = episode.instance.spec.ground_truth.service
    return [
        ("get_alerts", {}),
        ("get_events", {}),
        ("describe_service", {"service": service}),
        ("send_message", {"text": "looking at " + service}),
        ("ask_hint", {}),
        ("restart_service", {"service": "no-such-service"}),
        ("run_tests", {"suite": "unit"}),
    ]


@pytest.mark.parametrize("scenario_id", scenario_ids())
def test_each_output_carries_the_effects_its_tool_declares(scenario_id):
    episode = Episode.make(scenario_id, 0)
    spec = episode.instance.spec
    steps = [episode.apply("a", tool, args) for tool, args in _calls(episode)]
    recorder = _Recorder(episode)
    # The wrong fix's edits could move the lines the solution's edit looks for.
    wrong = [s for s in spec.wrong_fix if TOOLS[s.tool].operates]
    episode.play_steps(wrong, "w")
    episode.play_steps(spec.solution, "r")
    steps += recorder.steps
    for step in steps:
        _check_effects(step)
    assert {s.tool for s in steps} >= {s.tool for s in spec.solution}
    assert steps[-1].done


class _Recorder:
    """Keeps every step `episode.apply` returns from here on."""

    def __init__(self, episode: Episode) -> None:
        self.steps: list[StepResult] = []
        apply = episode.apply

        def recorded(*args: Any, **kwargs: Any) -> StepResult:
            step = apply(*args, **kwargs)
            self.steps.append(step)
            return step

        episode.apply = recorded  # type: ignore[method-assign]


@pytest.mark.parametrize(
    ("tool", "args", "forged"),
    [
        # An operation that forgets to say so would be free and unseen by the grade.
        ("restart_service", None, {"operation": None}),
        ("scale_service", None, {"operation": None}),
        # A look that claims an operation, or a message, or a report.
        ("read_logs", None, {"operation": "copy:restart_service"}),
        ("get_alerts", None, {"message": "copy:send_message"}),
        # A report that does not end the episode.
        ("submit_report", None, {"report": None}),
        # An edit that keeps its patch to itself: a replay by content could not place it.
        ("edit_lines", None, {"patch": None}),
        # A look that claims to have changed the code.
        ("read_logs", None, {"patch": "copy:edit_lines"}),
    ],
)
def test_an_output_that_disagrees_with_its_tool_s_traits_is_refused(
    monkeypatch, tool, args, forged
):
    """Episode.apply checks every output against its tool's traits (not only these tests)."""
    from dataclasses import replace

    episode = Episode.make("meta-sre/payment-bad-deploy-v2", 0)
    spec = episode.instance.spec
    service = spec.ground_truth.service
    samples = {
        "restart_service": {"service": service},
        "scale_service": {"service": service, "replicas": 4},
        "read_logs": {"service": service},
        "get_alerts": {},
        "submit_report": dict(spec.solution[-1].args),
        "send_message": {"text": "hi"},
        "edit_lines": {
            "path": next(p for p in sorted(episode.workspace.base.files) if p.endswith(".py")),
            "action": "insert",
            "start_line": 1,
            "content": "# looked at\n",
        },
    }
    # Real effects to borrow, from a real successful call of the named tool.
    donor = Episode.make("meta-sre/payment-bad-deploy-v2", 0)
    effects = {}
    for name, value in forged.items():
        if isinstance(value, str) and value.startswith("copy:"):
            source = value.removeprefix("copy:")
            effects[name] = getattr(donor.apply("d", source, samples[source]).output, name)
        else:
            effects[name] = value
    real = TOOLS[tool]
    lying = replace(real, handler=lambda ctx, parsed: replace(real.handler(ctx, parsed), **effects))
    import metasre.simulator.episode as episode_module

    monkeypatch.setattr(
        episode_module, "get_tool", lambda name: lying if name == tool else TOOLS[name]
    )
    with pytest.raises(RuntimeError, match=tool):
        episode.apply("a", tool, samples[tool])
