"""The protos are enough: a client that knows nothing of this project plays a session end to end.

`independent_client.py` runs in a subprocess with no site processing, builds its stubs from
`protos/` with grpc_tools.protoc into a temporary folder (never the committed `metasre.v1`
modules, never the SDK), and against a real server on 127.0.0.1 creates a session, plays the
scenario's reference (its first call over unary CallTool, the rest over a Connect stream) to the
report, and reads the grade.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import grpc

from metasre.simulator import resolve

from .conftest import AD, TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("independent_client.py")


async def test_a_client_built_from_the_protos_alone_plays_a_session_to_its_grade(server):
    spec = resolve(AD).instance(3).spec
    calls = [("get_alerts", {}), *((s.tool, s.args) for s in spec.solution)]
    plan = {"scenario": AD, "seed": 3, "calls": calls}
    site = Path(grpc.__file__).resolve().parents[1]  # grpcio, protobuf, grpc_tools live here
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",  # no environment, no script folder on the path ...
        "-S",  # ... and no site processing: the project's editable install is invisible
        str(SCRIPT),
        str(site),
        str(ROOT / "protos"),
        server.address,
        json.dumps(plan),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), TIMEOUT * 3)
    assert proc.returncode == 0, err.decode()
    played = json.loads(out)
    assert played["project_modules"] == []
    for stub in played["stubs"]:
        assert not Path(stub).resolve().is_relative_to(ROOT), stub
    assert [r["tool"] for r in played["results"]] == [tool for tool, _ in calls]
    assert all(r["ok"] for r in played["results"]), played["results"]
    assert [r["tick"] for r in played["results"]] == list(range(1, len(calls) + 1))
    assert played["grade"]["grade"]["resolved"] is True
    assert played["grade"]["grade"]["total"] >= 0.9
