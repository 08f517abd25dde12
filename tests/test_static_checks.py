"""Lint, format and strict typing, run as part of the suite so CI guards them."""

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
    _tool("mypy")
    # tools/typecheck.py names every file by its module for mypy: no tree of links.
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "typecheck.py"),
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_type_check_sees_every_package_module():
    """A check that found no files would pass anything."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from typecheck import sources
    finally:
        sys.path.remove(str(ROOT / "tools"))
    names = {s.module for s in sources()}
    assert {f"metasre.{p}" for p in PACKAGES} <= names
    assert {"metasre.service.core.coordinator", "metasre.simulator.sandbox.helper.child"} <= names
    assert "metasre.ray.pool" in names  # the folder ray_fleet/ is the package metasre.ray
    assert not any(".scenarios.payment_bad_deploy" in n for n in names)
