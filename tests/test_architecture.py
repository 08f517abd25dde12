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


def _foreign(loaded: set[str]) -> set[str]:
    """The top-level packages of `loaded` that are neither the standard library nor metasre."""
    bare = _modules_after("pass")  # what the interpreter and site load by themselves
    tops = {m.split(".")[0] for m in loaded - bare}
    return tops - set(sys.stdlib_module_names) - {"metasre"}


def test_the_service_core_loads_neither_grpc_nor_the_rest_of_the_service():
    """The package root re-exports lazily: the core is importable without the wire."""
    loaded = _modules_after("import metasre.service.core")
    assert not {m for m in loaded if m.split(".")[0] in FOREIGN_WIRE}
    service = {m for m in loaded if m.startswith("metasre.service.")}
    assert service and all(
        m.startswith("metasre.service.core.") for m in service - {"metasre.service.core"}
    ), sorted(service)


def test_the_pure_policies_load_nothing_but_the_standard_library():
    loaded = _modules_after("import metasre.agents.policies")
    assert _foreign(loaded) == set()
    ours = {m for m in loaded if m.startswith("metasre.")}
    allowed = ("metasre.agents.policies", "metasre.agents.errors")
    assert {m for m in ours if m.count(".") > 1 and not m.startswith(allowed)} == set()


def _import_seconds(*modules: str, runs: int = 3) -> list[float]:
    """Per module, the least CPU time of `runs` fresh imports of it (its parents included).

    CPU time rather than the clock's, and the modules taken in turn: the machine's other work
    slows a clock side by side with it, not what the import itself costs.
    """
    code = "import time; t = time.process_time(); import {}; print(time.process_time() - t)"
    best = [float("inf")] * len(modules)
    for _ in range(runs):
        for i, module in enumerate(modules):
            out = subprocess.run(
                [sys.executable, "-c", code.format(module)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            best[i] = min(best[i], float(out.stdout))
    return best


def test_a_pure_part_imports_in_less_time_than_the_wire_it_no_longer_loads():
    """Import time, side by side: the pure parts against the wire modules beside them.

    Before the roots re-exported lazily, importing either pure part imported the wire too,
    so it took at least as long as the wire module. Here (2 cores, load 9, CPU time): the
    policies 0.03-0.05 s against the client's 0.10-0.15 s, the core 0.69-0.85 of the server's.
    The core's margin is thin (most of it is the simulator, which the server loads too): the
    modules it loads are pinned exactly above, this bounds what they cost.
    """
    policies, client, core, server = _import_seconds(
        "metasre.agents.policies",
        "metasre.agents.client",
        "metasre.service.core",
        "metasre.service.server",
    )
    assert policies < 0.5 * client, (policies, client)
    assert core < 0.95 * server, (core, server)


BRIDGE_EXTRAS = ("starlette", "uvicorn", "websockets", "mcp", "openenv", "fastmcp", "httpx")
"""What the openenv and mcp extras (and their test clients) bring: never the core's."""


def test_the_core_needs_none_of_the_bridges_extras():
    import re
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    core = {re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0] for r in project["project"]["dependencies"]}
    assert not core & set(BRIDGE_EXTRAS)
    extras = project["project"]["optional-dependencies"]
    assert {"openenv", "mcp"} <= set(extras)
    loaded = _modules_after("import metasre.agents, metasre.agents.policies, metasre.cli.main")
    assert not {m for m in loaded if m.split(".")[0] in BRIDGE_EXTRAS}


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


# -- every import edge of the layering ------------------------------------------------------------

LAYERS = {
    "simulator": "simulator",
    "service": "service",
    "agents": "agents",
    "cli": "cli",
    "conformance": "conformance",
    "ray": "ray_fleet",
    "v1": "protos/metasre/v1",
}
"""Each top-level package of `metasre` and its folder."""
ALLOWED = {
    "simulator": {"simulator"},
    "v1": {"v1"},
    "agents": {"agents", "v1"},
    "service-core": {"service-core", "simulator"},
    "service-store": {"service-store", "service-core", "simulator"},
    "service-top": {
        "service-top",
        "service-store",
        "service-core",
        "service-wire",
        "simulator",
        "v1",
    },
    "service-wire": {
        "service-wire",
        "service-top",
        "service-store",
        "service-core",
        "simulator",
        "v1",
    },
    "conformance": {"conformance", "simulator", "agents"},
    "ray": {"ray", "agents", "service-top"},
    "cli": {
        "cli",
        "conformance",
        "service-top",
        "service-wire",
        "service-store",
        "service-core",
        "simulator",
        "agents",
        "v1",
    },
}
"""Which layers each layer may import (DESIGN.md: simulator <- service <- cli; agents see only
the wire; the conformance suite plays the agents' pure policies on the simulator, beside the
service; a fleet on Ray keeps shard processes and plays rollouts, a library like the others,
so it imports no CLI). In the service: the core (sessions, sequencer, turn policies,
attribution, errors) <- the store (SQLite, codec, recovery, export) <- the registry and the
server's assembly <- the wire (servicers, protobuf conversion), which alone speaks gRPC with
the server."""
TOP_LEAVES = {"config", "version", "gc_freeze"}
"""Modules of the service's top level that import nothing of the service (any layer may use
them: settings, the version, the GC freezer)."""
FOREIGN_WIRE = ("grpc", "grpc_health", "grpc_reflection", "grpc_tools", "google")


from pathlib import Path  # noqa: E402


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "metasre" or len(parts) < 2:
        return None
    if parts[1] == "service":
        if len(parts) >= 3 and parts[2] in ("core", "store", "wire"):
            return f"service-{parts[2]}"
        if len(parts) >= 3 and parts[2] in TOP_LEAVES:
            return "service-core"  # leaves: usable from any layer
        return "service-top"
    return parts[1]


def _edges() -> list[tuple[str, str, str]]:
    """(file, its layer, an imported module) for every import statement, nested ones too."""
    import ast

    root = Path(__file__).resolve().parent.parent
    out = []
    for name, folder in LAYERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root / folder)
            if "scenarios" in rel.parts and name == "simulator" and len(rel.parts) > 2:
                continue  # scenario worlds: the code agents read and repair, not ours
            module = ".".join(("metasre", name, *rel.with_suffix("").parts))
            module = module.removesuffix(".__init__")
            layer = _layer_of(module)
            assert layer is not None
            package = module if path.name == "__init__.py" else module.rpartition(".")[0]
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    out += [(f"{name}/{rel}", layer, alias.name) for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    base = node.module or ""
                    if node.level:
                        anchor = package.split(".")
                        anchor = anchor[: len(anchor) - node.level + 1]
                        base = ".".join([*anchor, base] if base else anchor)
                    for alias in node.names:
                        # `from metasre.service import auth` imports the module auth
                        sub = f"{base}.{alias.name}"
                        out.append((f"{name}/{rel}", layer, sub if _is_module(root, sub) else base))
    return out


def _is_module(root: Path, module: str) -> bool:
    parts = module.split(".")
    if parts[0] != "metasre" or len(parts) < 3 or parts[1] not in LAYERS:
        return False
    folder = root / LAYERS[parts[1]] / Path(*parts[2:])
    return folder.with_suffix(".py").exists() or (folder / "__init__.py").exists()


def test_every_import_edge_follows_the_layering():
    wrong = []
    for where, layer, target in _edges():
        to = _layer_of(target)
        if to is not None and to not in ALLOWED[layer]:
            wrong.append(f"{where} ({layer}) imports {target} ({to})")
        if (
            layer in ("simulator", "service-core", "service-store")
            and target.split(".")[0] in FOREIGN_WIRE
            and not target.startswith("google.protobuf.json_format")
        ):
            wrong.append(f"{where} ({layer}) imports {target}")
    assert wrong == []


def test_the_layering_check_sees_the_edges_it_pins():
    """A scan that found nothing would pass anything."""
    edges = _edges()
    assert {layer for _, layer, _ in edges} == set(ALLOWED)
    assert any(
        t.startswith("metasre.simulator") for _, layer, t in edges if layer == "service-core"
    )
    assert any(t == "grpc" for _, layer, t in edges if layer == "service-wire")
    assert any(
        t.startswith("metasre.service.core") for _, layer, t in edges if layer == "service-store"
    )


# -- values that cross from the simulator to the service ------------------------------------------


NOT_VALUES = ("metasre.simulator.scenarios", "metasre.simulator.tools.base.Tool")
"""What the service imports from the simulator that is no value of an episode: the catalogue's
entries and the tools' definitions (each written once, in the module that defines it)."""


def _crossing_dataclasses() -> set[type]:
    """Every dataclass of an episode's values the service imports, and those in their fields."""
    import ast
    import dataclasses
    import importlib
    import re

    root = Path(__file__).resolve().parent.parent
    found: set[type] = set()
    for path in sorted((root / "service").rglob("*.py")):
        package = ["metasre", *path.relative_to(root).parent.parts]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not node.level:
                continue
            anchor = package[: len(package) - node.level + 1]
            module = ".".join([*anchor, node.module] if node.module else anchor)
            if not module.startswith("metasre.simulator"):
                continue
            imported = importlib.import_module(module)
            for alias in node.names:
                value = getattr(imported, alias.name, None)
                if (
                    isinstance(value, type)
                    and dataclasses.is_dataclass(value)
                    and not f"{value.__module__}.{value.__name__}".startswith(NOT_VALUES)
                ):
                    found.add(value)
    todo = list(found)
    while todo:  # the dataclasses their fields' annotations name, in their modules
        cls = todo.pop()
        space = vars(sys.modules[cls.__module__])
        for f in dataclasses.fields(cls):
            for name in re.findall(r"[A-Za-z_]\w*", str(f.type)):
                t = space.get(name)
                if isinstance(t, type) and dataclasses.is_dataclass(t) and t not in found:
                    found.add(t)
                    todo.append(t)
    return found


def test_values_that_cross_from_the_simulator_to_the_service_are_built_by_keyword():
    """A value of ten fields built by position breaks silently when a field is added."""
    import dataclasses

    crossing = _crossing_dataclasses()
    names = {c.__name__ for c in crossing}
    assert {"StepResult", "ServiceRow", "Grade", "ToolOutput", "RecordedCall", "Patch"} <= names
    by_position = sorted(
        f"{c.__module__}.{c.__name__}.{f.name}"
        for c in crossing
        for f in dataclasses.fields(c)
        if not f.kw_only
    )
    assert by_position == []
