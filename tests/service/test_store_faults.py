"""A store that cannot write, for real: a full disk and read-only files under a running server.

The full disk is a small tmpfs of its own (mounting needs root with CAP_SYS_ADMIN), filled with a
real file until ENOSPC; the read-only store is its files made immutable (`chattr +i`, which holds
even for root and for open descriptors); the tests skip where either is impossible. Meanwhile an
agent keeps calling: every call the server answered with a result is in the store, the first call
it could not store fails with UNAVAILABLE / STORE_UNAVAILABLE and a message that says why, and
nothing after it is acknowledged. The server itself stays up, says NOT_SERVING and refuses new
sessions while it cannot store them, and once the disk has room again says SERVING and stores new
sessions. A store whose files are removed, replaced or truncated under the server is noticed the
same way, at the next commit or by the server's own check, and for good.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2
from grpc_status import rpc_status

from metasre.service import Limits, ServerConfig, build_server
from metasre.service.store.sqlite import StoreError, TrajectoryStore
from metasre.v1 import agent_pb2, agent_pb2_grpc, control_pb2, control_pb2_grpc

from .conftest import (
    TIMEOUT,
    create,
    details,
    health_becomes,
    owned_channel,
    owner_channel,
    struct,
)
from .serve_process import metasre_serve


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
            created = await create(control, ("a",), scenario="meta-sre/migration-cascade-v3")
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
            # The server says it cannot store anything, and takes no new work.
            await health_becomes(channel, health_pb2.HealthCheckResponse.NOT_SERVING)
            with pytest.raises(grpc.aio.AioRpcError) as no_new:
                await create(control, ("a",))
            assert no_new.value.code() == grpc.StatusCode.UNAVAILABLE
            assert "no session can be created" in (no_new.value.details() or "")

            yield_back = getattr(break_disk, "undo", None)
            assert callable(yield_back)
            yield_back()
            # With room again, the same server says so and stores new sessions.
            await health_becomes(channel, health_pb2.HealthCheckResponse.SERVING)
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


# -- a store removed, replaced or truncated under a running server (issue 19, finding 5) -------


def _replace(path: Path) -> None:
    copy = path.with_name(path.name + ".copy")
    shutil.copyfile(path, copy)
    os.replace(copy, path)  # the same bytes, another file


STORE_FAULTS = {
    "database removed": lambda db: db.unlink(),
    "WAL removed": lambda db: Path(f"{db}-wal").unlink(),
    "database truncated": lambda db: os.truncate(db, 0),
    "WAL truncated": lambda db: os.truncate(f"{db}-wal", 0),
    "database replaced": _replace,
}


@pytest.mark.parametrize("fault", list(STORE_FAULTS))
async def test_a_store_removed_or_truncated_under_the_server_is_noticed_and_nothing_more_is_acknowledged(  # noqa: E501
    tmp_path: Path, fault: str
):
    db = tmp_path / "store.db"
    server = await build_server(ServerConfig(port=0, store_path=db))
    await server.start()
    try:
        async with owned_channel(server.address) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            created = await create(control, ("a",))
            sid, token = created.session.session_id, created.tokens[0].join_token
            stub = agent_pb2_grpc.AgentServiceStub(channel)

            async def call(i: int) -> agent_pb2.CallToolResponse:
                return await stub.CallTool(
                    agent_pb2.CallToolRequest(
                        session_id=sid,
                        token=token,
                        call=agent_pb2.ToolCall(call_id=f"c{i}", tool="get_alerts"),
                    ),
                    timeout=TIMEOUT,
                )

            for i in range(3):
                await call(i)
            STORE_FAULTS[fault](db)
            # The very next call that must be stored is refused, not acknowledged.
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call(3)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
            status = rpc_status.from_call(refused.value)
            assert status is not None and details(status)[0].reason == "STORE_UNAVAILABLE"
            message = refused.value.details() or ""
            assert "store file" in message and str(tmp_path) in message, message
            assert any(w in message for w in ("removed", "truncated", "replaced", "header"))
            await health_becomes(channel, health_pb2.HealthCheckResponse.NOT_SERVING)
            assert server.store is not None and server.store.lost
            # New work is refused, saying why, and it stays so: the files are gone for good.
            with pytest.raises(grpc.aio.AioRpcError) as no_new:
                await create(control, ("a",))
            assert no_new.value.code() == grpc.StatusCode.UNAVAILABLE
            assert details(rpc_status.from_call(no_new.value))[0].reason == "STORE_UNAVAILABLE"
            assert "store file" in (no_new.value.details() or "")
    finally:
        await server.stop(0.5)


async def test_a_store_removed_while_idle_is_noticed_and_logged_loudly(tmp_path: Path):
    db = tmp_path / "store.db"
    async with metasre_serve("--store", str(db)) as served:
        async with grpc.aio.insecure_channel(served.address) as channel:
            await health_becomes(channel, health_pb2.HealthCheckResponse.SERVING)
            db.unlink()  # nothing is being written: the server's own check finds it
            await health_becomes(channel, health_pb2.HealthCheckResponse.NOT_SERVING)
        assert await served.stop() == 0
    loud = [e for e in served.events() if e["event"] == "store_unavailable"]
    assert loud and loud[0]["level"] == "critical" and loud[0]["lost"] is True
    assert "was removed" in loud[0]["error"]


async def test_on_a_full_disk_no_session_is_told_it_closed_unless_its_close_is_stored(disk: Path):
    """Issue 19, finding 5: a session whose close could not be stored came back after a restart
    although its agents had been told it was closed. What a session's agents and owner are told
    now matches what a server restarted on the store does."""
    db, filler, owner = disk / "store.db", disk / "filler.bin", secrets.token_urlsafe(24)
    async with metasre_serve("--store", str(db)) as served:
        async with owner_channel(served.address, owner) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            closed = (await create(control, ("a",))).session.session_id
            await control.CloseSession(control_pb2.CloseSessionRequest(session_id=closed))
            idle = (await create(control, ("a",))).session.session_id
            busy = await create(control, ("a",))
            stub = agent_pb2_grpc.AgentServiceStub(channel)

            async def call(i: int) -> agent_pb2.CallToolResponse:
                return await stub.CallTool(
                    agent_pb2.CallToolRequest(
                        session_id=busy.session.session_id,
                        token=busy.tokens[0].join_token,
                        call=agent_pb2.ToolCall(
                            call_id=f"c{i}", tool="read_logs", args=struct({"service": "x" * 10})
                        ),
                    ),
                    timeout=TIMEOUT,
                )

            await call(0)
            fill(filler)
            # The owner's close is refused, and the session goes on as it was.
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await control.CloseSession(control_pb2.CloseSessionRequest(session_id=idle))
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
            assert f"session {idle} was not closed" in (refused.value.details() or "")
            got = await control.GetSession(control_pb2.GetSessionRequest(session_id=idle))
            assert not got.session.closed
            # The busy session's agent learns that its session stopped, and whether it closed.
            told = None
            for i in range(1, 40):
                try:
                    await call(i)
                except grpc.aio.AioRpcError as exc:
                    told = exc.details() or ""
                    break
            assert told is not None, "the store never ran out of room"
            said_closed = "the session is closed" in told
            assert said_closed or "could not be marked closed" in told, told
        served.proc.send_signal(signal.SIGKILL)  # a crash while the disk is full
        await served.proc.wait()
    filler.unlink()
    async with metasre_serve("--store", str(db)) as again:
        async with owner_channel(again.address, owner) as channel:
            control = control_pb2_grpc.ControlServiceStub(channel)
            listed = await control.ListSessions(control_pb2.ListSessionsRequest())
            back = {s.session_id for s in listed.sessions}
        assert await again.stop() == 0
    assert closed not in back  # its close was acknowledged: it never comes back
    assert idle in back  # its close was refused: it is as its owner was told, open
    assert (busy.session.session_id in back) is not said_closed
