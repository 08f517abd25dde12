"""The sandbox fails closed: without Landlock, `metasre serve` refuses to start unless told.

The kernel's Landlock is taken away for real: a launcher installs a seccomp filter that makes
`landlock_create_ruleset` fail with ENOSYS (as on a kernel without Landlock), then execs
`metasre serve`; filters are inherited across exec, so the server and its sandbox helpers see
no Landlock at all.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import platform
import subprocess
import sys
import textwrap

import grpc
import pytest

from metasre.v1 import control_pb2, control_pb2_grpc

from .conftest import TIMEOUT

pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "aarch64"), reason="the launcher's filter is per-arch"
)

# A filter that answers ENOSYS to the three Landlock syscalls and allows everything else.
_LAUNCHER = textwrap.dedent(
    """
    import ctypes, errno, os, platform, sys
    arch = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}[platform.machine()]
    class F(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                    ("k", ctypes.c_uint)]
    class P(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(F))]
    LD, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06
    ALLOW, ERRNO = 0x7FFF0000, 0x00050000
    prog = [(LD, 0, 0, 4), (JEQ, 1, 0, arch), (RET, 0, 0, ALLOW), (LD, 0, 0, 0),
            (JGE, 0, 3, 444), (JGE, 2, 0, 447), (RET, 0, 0, ERRNO | errno.ENOSYS),
            (RET, 0, 0, ALLOW), (RET, 0, 0, ALLOW)]
    filters = (F * len(prog))(*[F(*p) for p in prog])
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(38, 1, 0, 0, 0) == 0
    assert libc.prctl(22, 2, ctypes.byref(P(len(prog), filters)), 0, 0) == 0
    os.execv(sys.executable, [sys.executable, "-m", "metasre.cli.main", *sys.argv[1:]])
    """
)


def _landlock_abi() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return max(0, int(libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))))


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("METASRE_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def test_serve_refuses_to_start_without_landlock(tmp_path: os.PathLike[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, "serve", "--port", "0", "--no-store"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=_env(),
        cwd=tmp_path,
    )
    assert done.returncode == 8, done.stderr  # ExitCode.SANDBOX
    assert "Traceback" not in done.stderr
    assert "Landlock" in done.stderr and "--allow-weak-isolation" in done.stderr
    assert done.stdout == ""  # never said it was serving


async def _server_info(address: str) -> control_pb2.GetServerInfoResponse:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = control_pb2_grpc.ControlServiceStub(channel)
        return await stub.GetServerInfo(control_pb2.GetServerInfoRequest(), timeout=TIMEOUT)


async def _serve_and_ask(*argv: str, env: dict[str, str]) -> control_pb2.GetServerInfoResponse:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = await asyncio.wait_for(proc.stdout.readline(), TIMEOUT)
        assert line, (await proc.stderr.read()).decode()
        return await _server_info(json.loads(line)["address"])
    finally:
        proc.kill()
        await proc.wait()


async def test_weak_isolation_is_explicit_loud_and_visible() -> None:
    info = await _serve_and_ask(
        sys.executable,
        "-c",
        _LAUNCHER,
        "serve",
        "--port",
        "0",
        "--no-store",
        "--allow-weak-isolation",
        env=_env(),
    )
    assert info.sandbox.weak_allowed
    assert any("Landlock" in m for m in info.sandbox.missing), info.sandbox
    assert not any(layer.startswith("landlock") for layer in info.sandbox.layers)


@pytest.mark.skipif(_landlock_abi() < 6, reason="this kernel lacks Landlock ABI 6")
async def test_a_full_server_reports_its_layers() -> None:
    info = await _serve_and_ask(
        sys.executable, "-m", "metasre.cli.main", "serve", "--port", "0", "--no-store", env=_env()
    )
    assert not info.sandbox.weak_allowed
    assert list(info.sandbox.missing) == []
    layers = " | ".join(info.sandbox.layers)
    assert "landlock" in layers and "no TCP" in layers and "no signals" in layers
    assert "seccomp" in layers
