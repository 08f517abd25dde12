"""mypy strict over the packages, each file named by its module: `python tools/typecheck.py`.

pyproject maps folders to `metasre.<folder>` through setuptools' import hook, which mypy does
not run, and mypy names a file by the folders above it (`service.core.x`, whose relative
imports of `...simulator` would climb past the top). So this hands mypy every module with its
real name (`metasre.service.core.x`) through its build API, and `protos/` as the path of the
generated `metasre.v1`: no tree of links, no install. Settings come from pyproject's
[tool.mypy]. Exits 1 with mypy's messages when it finds errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mypy import build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.modulefinder import BuildSource

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("simulator", "agents", "cli", "conformance", "service", "ray_fleet")
"""The folders checked, each the package `metasre.<folder>` unless `RENAMED` says otherwise."""
RENAMED = {"ray_fleet": "ray"}
"""Folders whose package has another name (pyproject's package-dir): `metasre.ray` is not a
folder `ray/`, which would shadow Ray itself for anything run from the checkout."""


def sources(root: Path = ROOT) -> list[BuildSource]:
    """Every module of the packages (folders with an `__init__.py`), by its dotted name."""
    out = []
    for folder in PACKAGES:
        for path in sorted((root / folder).rglob("*.py")):
            folders = path.relative_to(root).parents
            if any(not (root / d / "__init__.py").exists() for d in folders if d != Path(".")):
                continue  # not a package (scenario families' folders): as `mypy -p` skips it
            parts = path.relative_to(root).with_suffix("").parts
            parts = (RENAMED.get(parts[0], parts[0]), *parts[1:])
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out.append(BuildSource(str(path), ".".join(("metasre", *parts)), None))
    return out


def main(argv: list[str] | None = None) -> int:
    """Check the packages; 0 when mypy finds nothing, 1 with its messages on stdout."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", default=str(ROOT / ".mypy_cache"), help="mypy's cache")
    args = parser.parse_args(argv)
    _, options = process_options(
        ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", args.cache_dir, "-c", ""]
    )
    options.mypy_path = [str(ROOT / "protos"), *options.mypy_path]
    try:
        result = build.build(sources=sources(), options=options)
    except CompileError as exc:
        print("\n".join(exc.messages))
        return 1
    if result.errors:
        print("\n".join(result.errors))
        return 1
    print(f"mypy: no issues in {len(result.files)} modules", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
