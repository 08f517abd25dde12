"""A store that cannot write, for real: a full disk and read-only files under a running server.

The full disk is a small tmpfs of its own (mounting needs root with CAP_SYS_ADMIN), filled with a
real file until ENOSPC; the read-only store is its files made immutable (`chattr +i`, which holds
even for root and for open descriptors); the tests skip where either is impossible. Meanwhile an
agent keeps calling: every call the server answered with a result is in the store, the first call
it could not store fails with UNAVAILABLE / STORE_UNAVAILABLE and a message that says why, and
nothing after it is acknowledged. The server itself stays up and, once the disk has room again,
stores new sessions.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status

from metasre.service import Limits, ServerConfig, build_server
from metasre.service.store import StoreError, TrajectoryStore
from metasre.v1 import agent_pb2, agent_pb2_grpc, control_pb2, control_pb2_grpc

from .conftest import TIMEOUT, create, details, owned_channel, struct


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs of its own."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}); needs root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(path: Path) -> None:
    """Write `path` until the file system is full."""
    chunk = b"\0" * 65536
    with open(path, "wb", buffering=0) as handle:
        while True:
            try:
                handle.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                break
        with contextlib.suppress(OSError):  # the last bytes that fit
            while True:
                handle.write(b"\0")


async def play_until_refused(disk: Path, break_disk: object, expected: tuple[str, ...]) -> None:
    db = disk / "store.db"
    server = await build_server(
        ServerConfig(port=0, limits=Limits(turn_timeout_seconds=10.0), store_path=db)
    )
    await server.start()
    try:
        async with owned_channel(server.address) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            created = await create(control, ("a",), scenario="meta-sre/migration-cascade-v1")
            sid, token = created.session.session_id, created.tokens[0].join_token
            stub = agent_pb2_grpc.AgentServiceStub(channel)

            async def call(i: int) -> agent_pb2.CallToolResponse:
                return await stub.CallTool(
                    agent_pb2.CallToolRequest(
                        session_id=sid,
                        token=token,
                        call=agent_pb2.ToolCall(
                            call_id=f"c{i}", tool="read_logs", args=struct({"service": "x" * 10})
                        ),
                    ),
                    timeout=TIMEOUT,
                )

            acked = []
            for i in range(3):
                await call(i)
                acked.append(f"c{i}")
            assert callable(break_disk)
            break_disk()
            refused = None
            for i in range(3, 40):  # a few calls may still fit in the WAL's last page
                try:
                    await call(i)
                except grpc.aio.AioRpcError as exc:
                    refused = (i, exc)
                    break
                acked.append(f"c{i}")
            assert refused is not None, "the store never ran out of room"
            i, exc = refused
            assert exc.code() == grpc.StatusCode.UNAVAILABLE
            status = rpc_status.from_call(exc)
            assert status is not None and details(status)[0].reason == "STORE_UNAVAILABLE"
            message = exc.details() or ""
            assert any(e in message for e in expected), message
            assert sid in message and "create a new session" in message
            # Nothing after the refusal is acknowledged: the session is gone.
            with pytest.raises(grpc.aio.AioRpcError) as later:
                await call(i + 1)
            assert later.value.code() == grpc.StatusCode.NOT_FOUND
            health = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=TIMEOUT
            )
            assert health.status == health_pb2.HealthCheckResponse.SERVING

            yield_back = getattr(break_disk, "undo", None)
            assert callable(yield_back)
            yield_back()
            # With room again, the same server stores new sessions.
            again = await create(control, ("a",))
            await control.CloseSession(
                control_pb2.CloseSessionRequest(session_id=again.session.session_id)
            )
    finally:
        await server.stop(0.5)
    store = TrajectoryStore(db)
    try:
        stored = [e.payload["call_id"] for e in store.events(sid) if e.kind == "applied"]
    finally:
        store.close()
    assert stored == acked, "the store holds exactly the acknowledged calls"


class Action:
    def __init__(self, do, undo) -> None:  # type: ignore[no-untyped-def]
        self._do, self.undo = do, undo

    def __call__(self) -> None:
        self._do()


async def test_a_full_disk_fails_calls_with_unavailable_and_acknowledges_only_what_is_stored(
    disk: Path,
):
    filler = disk / "filler.bin"
    await play_until_refused(
        disk,
        Action(lambda: fill(filler), lambda: filler.unlink()),
        ("database or disk is full", "disk I/O error"),
    )


async def test_a_store_file_made_read_only_fails_calls_with_unavailable(tmp_path: Path):
    # chattr +i makes the files immutable, even for root and for descriptors already open.
    files = [tmp_path / "store.db", tmp_path / "store.db-wal"]

    def chattr(flag: str) -> None:
        for path in files:
            done = subprocess.run(["chattr", flag, str(path)], capture_output=True, check=False)
            if done.returncode != 0:
                pytest.skip(f"chattr {flag} is not possible here: {done.stderr!r}")

    try:
        await play_until_refused(
            tmp_path,
            Action(lambda: chattr("+i"), lambda: chattr("-i")),
            ("disk I/O error", "readonly database", "not permitted"),
        )
    finally:
        for path in files:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)


def test_a_store_on_a_read_only_file_system_stops_the_server_at_startup(disk: Path):
    TrajectoryStore(disk / "store.db").close()
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    try:
        for path in (disk / "store.db", disk / "new" / "store.db"):
            with pytest.raises(StoreError, match=r"cannot (open|create|initialise) the store"):
                TrajectoryStore(path)
        done = subprocess.run(
            [sys.executable, "-m", "metasre.cli.main", "serve", "--store", str(disk / "store.db")],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 6  # ExitCode.STORE
        assert "error: cannot open the store" in done.stderr
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
    assert os.access(disk, os.W_OK)
