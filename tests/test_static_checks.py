"""Lint, format and strict typing, run as part of the suite so CI guards them."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("simulator", "agents", "cli", "conformance", "service")


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed; install the dev extras: pip install -e '.[dev]'")
    return path


def test_ruff_lint_and_format_pass():
    ruff = _tool("ruff")
    lint = subprocess.run([ruff, "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = subprocess.run([ruff, "format", "--check", "."], cwd=ROOT, capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_mypy_strict_passes_on_the_packages(tmp_path):
    mypy = _tool("mypy")
    # The editable install maps folders to metasre.* with an import hook mypy cannot follow, so
    # give it the namespace as a tree of links.
    namespace = tmp_path / "metasre"
    namespace.mkdir()
    for folder in PACKAGES:
        os.symlink(ROOT / folder, namespace / folder)
    # The generated wire package, which the service imports (its errors are ignored in config).
    os.symlink(ROOT / "protos" / "metasre" / "v1", namespace / "v1")
    args = [
        mypy,
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "--cache-dir",
        str(tmp_path / ".mypy_cache"),
    ]
    for folder in PACKAGES:
        args += ["-p", f"metasre.{folder}"]
    out = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
