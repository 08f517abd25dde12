"""Every generated family's files, written afresh or checked against the committed ones.

A family that is not a mix is written one way: its folder `simulator/scenarios/<family>/` holds
a hand-written `head.toml` (metadata, variables, topology, faults, checks, solution: templates
`{{...}}` only), and its module `tools/families/axes/<family>.py` writes its axes
(`axes() -> str`, the `[[variants.<axis>]]` tables and anything else that follows from data).
`scenario.toml` is wholly generated: a banner, the head, a mark, the axes. A module that also
writes other files of its folder (history commits) says which (`files()`, relative to the
folder) and which paths it owns (`OWNED`, globs: every file under them must be one it writes).
A shared platform's generator is a module of `tools/families/topologies/` with `files()` and
`OWNED`, relative to `simulator/scenarios/_topologies/<name>/`.

A mix (symptom-first family, `causes = [...]`) is hand-written data: its `scenario.toml` is
the whole of it and no module writes it.

    python -m tools.families check [family ...]        # exit 1 naming each stale file
    python -m tools.families regenerate [family ...]   # write them

With no family named, every generated family and platform.
"""

from __future__ import annotations

import importlib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from .authoring import HEAD, SCENARIOS, TOPOLOGIES, scenario_text

__all__ = ["HEAD", "SCENARIOS", "Unit", "mixes", "stale", "unit", "units", "write"]

HERE = Path(__file__).resolve().parent
AXES = HERE / "axes"
PLATFORMS = HERE / "topologies"


@dataclass(frozen=True)
class Unit:
    """One generated thing: a family (by its folder name) or a platform (`_topologies/<name>`)."""

    name: str
    folder: Path
    module: ModuleType

    def expected(self) -> dict[Path, str]:
        """Every file the unit's module writes, by path, with its text."""
        out: dict[Path, str] = {}
        if hasattr(self.module, "axes"):
            out[self.folder / "scenario.toml"] = scenario_text(self.name, self.module.axes())
        files = getattr(self.module, "files", None)
        for rel, text in (files() if files else {}).items():
            out[self.folder / rel] = text
        return out

    def owned(self) -> set[Path]:
        """The files on disk that the module owns (a stale one among them is to be removed)."""
        found: set[Path] = set()
        for pattern in getattr(self.module, "OWNED", ()):
            for path in self.folder.glob(pattern):
                if path.is_file():
                    found.add(path)
                else:
                    found.update(p for p in path.rglob("*") if p.is_file())
        return {p for p in found if "__pycache__" not in p.parts}


def _module(package: str, name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{package}.{name}")


def units() -> list[Unit]:
    """Every generated family (by folder name), then every generated platform."""
    out = [
        Unit(p.stem, SCENARIOS / p.stem, _module("axes", p.stem))
        for p in sorted(AXES.glob("[!_]*.py"))
    ]
    out += [
        Unit(f"_topologies/{p.stem}", TOPOLOGIES / p.stem, _module("topologies", p.stem))
        for p in sorted(PLATFORMS.glob("[!_]*.py"))
    ]
    return out


def unit(name: str) -> Unit:
    """The generated family or platform called `name`.

    Raises:
        SystemExit: naming the names there are, when none is called that.
    """
    for u in units():
        if u.name == name:
            return u
    names = ", ".join(u.name for u in units())
    raise SystemExit(f"no generated family or platform {name!r}; there are: {names}")


def mixes() -> list[str]:
    """The folders whose scenario.toml is a mix's (hand-written, `causes = [...]`)."""
    out = []
    for toml in sorted(SCENARIOS.glob("[!_]*/scenario.toml")):
        if "causes" in tomllib.loads(toml.read_text(encoding="utf-8")):
            out.append(toml.parent.name)
    return out


def stale(u: Unit) -> list[str]:
    """What differs between the committed files of `u` and what its module writes, one a line."""
    problems = []
    if hasattr(u.module, "axes") and not (u.folder / HEAD).is_file():
        return [f"{u.folder / HEAD}: missing (the family's hand-written head)"]
    expected = u.expected()
    for path, text in expected.items():
        if not path.is_file():
            problems.append(f"{path}: missing")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"{path}: differs from what {u.module.__name__} writes")
    for path in sorted(u.owned() - set(expected)):
        problems.append(f"{path}: not written by {u.module.__name__} (stale)")
    return problems


def write(u: Unit) -> list[Path]:
    """Write every file of `u` afresh (removing owned files it no longer writes); those written."""
    expected = u.expected()
    for path in u.owned() - set(expected):
        path.unlink()
    written = []
    for path, text in expected.items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            written.append(path)
    for pattern in getattr(u.module, "OWNED", ()):  # folders emptied above
        for folder in sorted(u.folder.glob(pattern), reverse=True):
            for d in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
                if not any(d.iterdir()):
                    d.rmdir()
    return written
