"""The dependency direction of DESIGN.md, pinned."""

import subprocess
import sys


def _modules_after(import_line: str) -> set[str]:
    code = f"import sys; {import_line}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_the_simulator_loads_no_grpc_or_protobuf():
    loaded = _modules_after("import metasre.simulator, metasre.simulator.episode")
    assert not {m for m in loaded if m.split(".")[0] in ("grpc", "google")}


def test_agents_import_neither_the_simulator_nor_the_service():
    loaded = _modules_after("import metasre.agents.policies")
    assert not {m for m in loaded if m.startswith(("metasre.simulator", "metasre.service"))}


def test_every_package_folder_ships_in_the_wheel():
    """A package folder missing from pyproject's list would be absent from an installed copy."""
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    setup = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setup["packages"])
    found = set()
    for package, folder in setup["package-dir"].items():
        for init in (root / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(root / folder)
            if "scenarios" in rel.parts[:1] and rel.parts[1:]:
                continue  # scenario folders are package data, not packages
            found.add(".".join((package, *rel.parts)))
    assert found <= listed, sorted(found - listed)
