"""Every family is written one way, and what is committed is what its module writes.

A folder of simulator/scenarios/ is either a generated family (a hand-written head.toml, its
axes module in tools/families/axes/, a scenario.toml the tool writes whole) or a mix (a
hand-written scenario.toml with `causes`); no generator lives beside the data, and the runtime
package never imports the authoring tool. Then, for every generated family and platform, its
module is run and every file it writes must be the committed one: a table edited by hand, or
a module changed without `python -m tools.families regenerate`, fails here.
"""

from __future__ import annotations

import ast
import types
from pathlib import Path

import pytest

from tools.families import HEAD, SCENARIOS, Unit, mixes, stale, unit, units
from tools.families.authoring import ROOT

FOLDERS = sorted(p.parent.name for p in SCENARIOS.glob("[!_]*/scenario.toml"))
GENERATED = {u.name for u in units()}


def test_every_folder_is_a_generated_family_or_a_mix():
    mixed = set(mixes())
    assert len(FOLDERS) >= 27 and len(mixed) >= 5  # a search that found nothing passes anything
    for folder in FOLDERS:
        assert (folder in GENERATED) != (folder in mixed), folder
        assert (SCENARIOS / folder / HEAD).is_file() == (folder in GENERATED), folder
    assert {n for n in GENERATED if not n.startswith("_topologies/")} <= set(FOLDERS)


def test_no_generator_lives_beside_the_data():
    # A family's Python is its code tree (history/) and its probes (hidden/), nothing else.
    stray = [
        p.relative_to(SCENARIOS).as_posix()
        for p in SCENARIOS.rglob("*.py")
        if p.parent != SCENARIOS
        and not {"history", "hidden"} & set(p.relative_to(SCENARIOS).parts)
        and "__pycache__" not in p.parts
    ]
    assert stray == []


def _is_tool(module: str) -> bool:
    return module == "tools" or module.startswith("tools.")


def test_the_runtime_package_never_imports_the_authoring_tool():
    for folder in ("simulator", "service", "agents", "cli", "conformance", "ray_fleet"):
        for path in (ROOT / folder).rglob("*.py"):
            parts = set(path.relative_to(ROOT).parts)
            if {"history", "hidden"} & parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.level == 0:
                    assert not _is_tool(node.module or ""), path
                if isinstance(node, ast.Import):
                    assert not any(_is_tool(a.name) for a in node.names), path


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_the_committed_files_are_what_the_module_writes(name):
    problems = stale(unit(name))
    assert problems == [], f"run python -m tools.families regenerate {name}\n" + "\n".join(problems)


def test_the_check_sees_a_changed_table_and_a_stale_file(tmp_path: Path):
    # clock_skew's real head, other axes: the scenario.toml on disk is not what they make.
    other = types.SimpleNamespace(__name__="other", axes=lambda: "[[variants.fault]]\nkey = 1\n")
    assert stale(Unit("clock_skew", SCENARIOS / "clock_skew", other))  # type: ignore[arg-type]
    # A module that owns a folder must write every file in it.
    (tmp_path / "history" / "01-old").mkdir(parents=True)
    (tmp_path / "history" / "01-old" / "commit.toml").write_text("")
    owner = types.SimpleNamespace(__name__="owner", OWNED=("history",), files=lambda: {})
    assert stale(Unit("x", tmp_path, owner)) == [  # type: ignore[arg-type]
        f"{tmp_path}/history/01-old/commit.toml: not written by owner (stale)"
    ]
