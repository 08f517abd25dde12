"""Editors and static tools follow every import of the package from a plain checkout.

jedi (the engine of most Python editors' go-to-definition) is given the checkout alone as its
path, as an editor opened on the folder sees it: no site-packages, so no install of metasre
(setuptools' editable install maps the folders with an import hook static tools never run).
Every import between the packages must resolve to a file by path: relative imports
(`tools/relative_imports.py` writes them), and the generated wire stubs as `metasre.v1` under
`protos/`.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from relative_imports import main as relative_imports  # noqa: E402
from relative_imports import package_files  # noqa: E402

jedi = pytest.importorskip("jedi", reason="install the dev extras: pip install -e '.[dev]'")


def _checkout(root: Path) -> jedi.Project:
    """A jedi project of the folder alone: its root and protos/ are its whole path."""
    return jedi.Project(root, sys_path=[str(root), str(root / "protos")], smart_sys_path=False)


def _package_imports(path: Path) -> list[tuple[int, int, str]]:
    """(line, column, name) of each name a package import brings in: relative or metasre.*."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and (
            node.level or (node.module or "").startswith("metasre")
        ):
            out += [(a.lineno, a.col_offset, a.name) for a in node.names if a.name != "*"]
    return out


def test_every_package_import_resolves_by_path_without_an_install():
    project = _checkout(ROOT)
    unresolved, seen = [], 0
    for path in package_files(ROOT):
        imports = _package_imports(path)
        if not imports:
            continue
        script = jedi.Script(path.read_text(encoding="utf-8"), path=path, project=project)
        for line, column, name in imports:
            seen += 1
            found = script.goto(line, column, follow_imports=True)
            if not found:
                unresolved.append(f"{path.relative_to(ROOT)}:{line} {name}")
    assert seen > 500  # the scan sees the package's imports
    assert unresolved == []


def test_the_check_tells_an_unresolvable_import_from_a_resolvable_one(tmp_path: Path):
    """Without the rewrite an absolute `metasre.simulator` import resolves to nothing."""
    (tmp_path / "simulator").mkdir()
    (tmp_path / "simulator" / "__init__.py").write_text("")
    (tmp_path / "simulator" / "episode.py").write_text("class Episode: ...\n")
    (tmp_path / "service").mkdir()
    (tmp_path / "service" / "__init__.py").write_text("")
    module = tmp_path / "service" / "core.py"
    project = _checkout(tmp_path)
    for source, resolves in (
        ("from metasre.simulator.episode import Episode\n", False),
        ("from ..simulator.episode import Episode\n", True),
    ):
        module.write_text(source)
        script = jedi.Script(source, path=module, project=project)
        assert bool(script.goto(1, source.index("Episode"), follow_imports=True)) is resolves


def test_the_rewrite_is_done_and_a_second_run_changes_nothing():
    assert relative_imports(["--check"]) == 0


def test_the_rewrite_makes_absolute_imports_relative_and_leaves_the_rest(tmp_path: Path):
    from relative_imports import rewrite

    folder = tmp_path / "service" / "core"
    folder.mkdir(parents=True)
    path = folder / "x.py"
    source = (
        "from metasre.simulator import Episode\n"
        "from metasre.service.core.events import Applied\n"
        "from metasre.service import config\n"
        "from metasre.v1 import common_pb2\n"
        "import metasre.simulator.views as views\n"
        "def f():\n"
        "    from metasre.agents.policies import (\n"
        "        ToolReply,\n"
        "    )\n"
        "NAME = 'metasre.simulator'\n"
    )
    text, problems = rewrite(source, path, tmp_path)
    assert problems == []
    assert text == (
        "from ...simulator import Episode\n"
        "from .events import Applied\n"
        "from .. import config\n"
        "from metasre.v1 import common_pb2\n"
        "from ...simulator import views as views\n"
        "def f():\n"
        "    from ...agents.policies import (\n"
        "        ToolReply,\n"
        "    )\n"
        "NAME = 'metasre.simulator'\n"
    )
    assert rewrite(text, path, tmp_path) == (text, [])


def test_an_import_that_binds_metasre_is_named_not_mangled(tmp_path: Path):
    from relative_imports import rewrite

    (tmp_path / "cli").mkdir()
    source = "import metasre.simulator.views\n"
    text, problems = rewrite(source, tmp_path / "cli" / "x.py", tmp_path)
    assert text == source and len(problems) == 1 and "binds `metasre`" in problems[0]


def test_the_script_runs_as_a_command():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "relative_imports.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
