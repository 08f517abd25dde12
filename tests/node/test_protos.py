"""The wire contract passes buf lint (CI also runs buf breaking against main: .ci/protos)."""

import subprocess

import pytest

from .conftest import NODE_AGENT, ROOT


def test_the_protos_pass_buf_lint():
    buf = NODE_AGENT / "node_modules" / ".bin" / "buf"
    if not buf.exists():
        pytest.skip("buf is missing: run `npm ci` in agents/node (.ci/run does it before pytest)")
    out = subprocess.run([buf, "lint"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    files = subprocess.run([buf, "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    # Our four files and the two vendored googleapis files: every file the stubs import.
    assert sorted(files.stdout.split()) == [
        "protos/metasre/v1/agent.proto",
        "protos/metasre/v1/common.proto",
        "protos/metasre/v1/control.proto",
        "protos/metasre/v1/watch.proto",
        "protos/third_party/googleapis/google/rpc/error_details.proto",
        "protos/third_party/googleapis/google/rpc/status.proto",
    ]
