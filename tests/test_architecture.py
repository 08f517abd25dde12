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
