"""Each package's public names, pinned: a change to what a package offers is a deliberate one.

The packages say what they offer in `__all__` (re-exported from their modules); the command
line, the outermost layer, uses only such names of the packages below it.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PUBLIC = {
    "metasre.service": {
        "PROTOCOL_VERSION",
        "SERVER_VERSION",
        "Limits",
        "Directory",
        "MetasreServer",
        "ServerConfig",
        "Shard",
        "Store",
        "StoreError",
        "StoreInUseError",
        "TrajectoryStore",
        "build_directory",
        "build_server",
        "describe_store",
        "episodes",
        "is_store_url",
        "open_store",
        "prepare_sandbox",
        "run_server",
        "serve",
        "write_jsonl",
    },
    "metasre.simulator": {
        "TOOLS",
        "Episode",
        "EpisodeOverError",
        "EpisodePhase",
        "Grade",
        "GradeComponent",
        "IncidentReport",
        "InvalidToolCallError",
        "Observation",
        "RewardUpdate",
        "SimulatorError",
        "StepResult",
        "Tool",
        "ToolOutput",
        "UnknownToolError",
        "resolve",
        "scenario_ids",
    },
    "metasre.conformance": {
        "GRADING_BUDGET_MS",
        "EpisodeCaller",
        "ScenarioVerdict",
        "check_shallow",
        "play_steps",
        "validate_scenario",
    },
    "metasre.agents.bridges": {
        "API_VERSION",
        "BridgeError",
        "BridgeSeat",
        "Hub",
        "Limits",
        "Step",
        "build_app",
    },
    "metasre.agents": {
        "AgentConnection",
        "CallResult",
        "ClientError",
        "ConnectionLostError",
        "EpisodeOverError",
        "EpisodeResult",
        "EpisodeSpec",
        "MetasreClient",
        "RetryPolicy",
        "SessionHandle",
        "SyncAgent",
        "SyncClient",
        "iter_rollouts",
        "solo_player",
    },
}


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_a_package_offers_exactly_its_pinned_names(package: str) -> None:
    module = importlib.import_module(package)
    assert set(module.__all__) == PUBLIC[package]
    for name in module.__all__:
        assert getattr(module, name) is not None, name


def _cli_imports() -> list[tuple[str, str, list[str]]]:
    """(file, module, names) of every `from metasre.<not cli> ... import` in the CLI.

    Relative imports (`from ..simulator import resolve`) count as the module they name.
    """
    found = []
    for path in sorted((ROOT / "cli").rglob("*.py")):
        package = ["metasre", *path.relative_to(ROOT).parent.parts]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            module = node.module or ""
            if node.level:
                anchor = package[: len(package) - node.level + 1]
                module = ".".join([*anchor, module] if module else anchor)
            if module.startswith("metasre.") and not module.startswith(
                ("metasre.cli", "metasre.v1")
            ):
                found.append((path.name, module, [a.name for a in node.names]))
    return found


def test_the_command_line_uses_only_public_names() -> None:
    """Each name the CLI takes from a lower package is in that module's `__all__`."""
    wrong = []
    for where, module_name, names in _cli_imports():
        module = importlib.import_module(module_name)
        offered = set(getattr(module, "__all__", ()))
        wrong += [f"{where}: {module_name}.{n}" for n in names if n not in offered]
    assert wrong == []


def test_the_check_sees_the_command_line_s_imports() -> None:
    assert any(module == "metasre.service" for _, module, _ in _cli_imports())
