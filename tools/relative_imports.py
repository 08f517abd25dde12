"""Rewrite the package's absolute `metasre.*` imports into relative ones, so tools can follow them.

`pyproject.toml` maps each top-level folder to `metasre.<folder>`; setuptools serves that map
through an import hook, which editors and static checkers do not run. A relative import names
the folder by path (`from ...simulator import Episode` in `service/core/x.py`), so Pyright and
jedi follow it from a plain checkout, while at run time it means what the absolute one did.

    python tools/relative_imports.py          # rewrite in place, then ruff sorts the imports
    python tools/relative_imports.py --check  # exit 1 if anything would change

Only import statements of the package's own modules change (`from metasre.x.y import z` and
`import metasre.x.y as z`), nested and TYPE_CHECKING ones included. Left as they are:

- `metasre.v1`: the generated stubs live under `protos/metasre/v1`, not beside the packages
  (`[tool.pyright] extraPaths` finds them);
- the scenario families' folders (`simulator/scenarios/<family>/`): generators run as scripts,
  and the worlds are the code agents repair;
- tests, bench and examples: they import the installed package, as a user does.

Idempotent: a second run changes nothing.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("simulator", "service", "agents", "cli", "conformance")
"""Top-level folders that are `metasre.<folder>` and sit side by side in the checkout."""
KEEP_ABSOLUTE = ("metasre.v1",)
"""Packages that are not a sibling folder: their imports stay absolute."""


def package_files(root: Path = ROOT) -> list[Path]:
    """Every module of the packages, the scenario families' folders left out."""
    out = []
    for folder in PACKAGES:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root)
            if rel.parts[:2] == ("simulator", "scenarios") and len(rel.parts) > 3:
                continue
            out.append(path)
    return out


def _package_of(path: Path, root: Path) -> list[str]:
    """The dotted package a module belongs to (the module itself for an `__init__.py`)."""
    parts = ["metasre", *path.relative_to(root).with_suffix("").parts]
    return parts[:-1]


def _relative(package: list[str], target: str) -> tuple[int, str] | None:
    """(level, rest) of `target` seen from `package`; None when it stays absolute."""
    if not target.startswith("metasre.") or any(
        target == kept or target.startswith(kept + ".") for kept in KEEP_ABSOLUTE
    ):
        return None
    wanted = target.split(".")
    common = 0
    while common < min(len(package), len(wanted)) and package[common] == wanted[common]:
        common += 1
    return len(package) - common + 1, ".".join(wanted[common:])


_FROM = re.compile(r"^(?P<head>\s*from\s+)(?P<module>metasre(?:\.\w+)+)(?P<tail>\s+import\b)")
_IMPORT = re.compile(
    r"^(?P<head>\s*)import\s+(?P<module>metasre(?:\.\w+)+)\s+as\s+(?P<alias>\w+)\s*$"
)


def rewrite(text: str, path: Path, root: Path = ROOT) -> tuple[str, list[str]]:
    """`text` with its package imports made relative, and what could not be rewritten."""
    package = _package_of(path, root)
    lines = text.splitlines(keepends=True)
    problems: list[str] = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found = _relative(package, node.module)
            if found is None:
                continue
            level, rest = found
            i = node.lineno - 1
            match = _FROM.match(lines[i])
            if match is None or match["module"] != node.module:
                problems.append(f"{path}:{node.lineno}: from {node.module} not on one line")
                continue
            lines[i] = match["head"] + "." * level + rest + lines[i][match.end("module") :]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found = _relative(package, alias.name)
                if found is None:
                    continue
                i = node.lineno - 1
                match = _IMPORT.match(lines[i].rstrip("\n"))
                level, rest = found
                head, _, name = rest.rpartition(".")
                if match is None or len(node.names) != 1 or not name:
                    problems.append(
                        f"{path}:{node.lineno}: `import {alias.name}` binds `metasre`; write"
                        " `from ... import` instead"
                    )
                    continue
                newline = lines[i][len(lines[i].rstrip("\n")) :]
                lines[i] = (
                    f"{match['head']}from {'.' * level}{head} import {name} as {match['alias']}"
                    + newline
                )
    return "".join(lines), problems


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or with --check, only report) every package module; 1 when work is left."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if needed")
    args = parser.parse_args(argv)
    changed: list[Path] = []
    problems: list[str] = []
    for path in package_files():
        text = path.read_text(encoding="utf-8")
        new, trouble = rewrite(text, path)
        problems += trouble
        if new != text:
            changed.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for problem in problems:
        print(problem, file=sys.stderr)
    if args.check:
        for path in changed:
            print(f"would rewrite {path.relative_to(ROOT)}")
        return 1 if changed or problems else 0
    if changed:
        ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
        if ruff is None:
            print("ruff not found: sort the imports with `ruff check --fix`", file=sys.stderr)
        else:
            files = [str(p) for p in changed]
            # relative imports sort after the absolute ones: let isort place them
            subprocess.run([ruff, "check", "--select", "I", "--fix", "-q", *files], check=False)
            subprocess.run([ruff, "format", "-q", *files], check=False)
    print(f"rewrote {len(changed)} files", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
