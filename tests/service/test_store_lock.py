"""One server per trajectory store (issue 17, command line item 5), with real processes.

`metasre demo` and `metasre serve` both default to `./metasre.db`; run side by side, the demo
rebuilt the server's open sessions and closed one when it stopped. Now a store is locked by the
server that opened it: a second server (or demo) on it says so in one line and exits 4, a
SIGKILLed server's lock goes with it, and `serve --handover` waits for the server it takes over
from to let go of the store.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from metasre.agents.client import MetasreClient
from metasre.cli.errors import ExitCode
from metasre.service.process import start_serve

from .conftest import PAY, TIMEOUT, pay_solution
from .serve_process import metasre_serve

EXIT_STORE_IN_USE = ExitCode.STORE_IN_USE

FAST_RECONNECT = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 200),
)


def metasre(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


async def test_a_second_server_or_demo_on_a_held_store_is_refused_in_one_line(tmp_path: Path):
    db = tmp_path / "metasre.db"
    async with metasre_serve("--store", str(db)) as served:
        async with MetasreClient(served.address) as client:
            handle = await client.create_session(PAY, seats=["a"])
            for argv in (
                ("serve", "--port", "0", "--store", str(db)),
                ("demo", "--store", str(db)),
                ("serve", "--port", "0"),  # the default store, ./metasre.db, is the same file
            ):
                done = await asyncio.to_thread(metasre, *argv, cwd=tmp_path)
                assert done.returncode == EXIT_STORE_IN_USE, (argv, done.stderr)
                lines = done.stderr.strip().splitlines()
                assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
                assert lines[0].startswith(f"error: the store {db} is in use by another server")
                assert f"pid {served.proc.pid}" in lines[0]
                assert "--store PATH" in lines[0]
                # said once (issue 28: the store said it, then the command line again)
                assert lines[0].count("stop that server") == 1, lines[0]
            # The server that owns the store never noticed: its session is open and playing.
            agent = client.agent(handle.id, handle.tokens["a"])
            await agent.join()
            assert (await agent.call("get_alerts")).tick == 1
            await agent.close()
        assert await served.stop() == 0
    assert not [e for e in served.events() if e["event"] == "session_closed"][1:]


async def test_a_killed_servers_lock_goes_with_it(tmp_path: Path):
    db = tmp_path / "store.db"
    async with metasre_serve("--store", str(db)) as served:
        served.proc.send_signal(signal.SIGKILL)
        await served.proc.wait()
    async with metasre_serve("--store", str(db)) as again:
        assert await again.stop() == 0


async def test_a_handover_passes_the_store_to_a_server_already_waiting_for_it(tmp_path: Path):
    """The next server starts while the old one still serves (a rolling deploy), waits for the
    store, and takes it, and the old port, the moment the old one has handed over."""
    db = tmp_path / "store.db"
    steps = pay_solution(seed=1)
    loop = asyncio.get_running_loop()
    async with metasre_serve("--store", str(db), "--handover") as first:
        port = first.address.rpartition(":")[2]
        client = MetasreClient(first.address, options=FAST_RECONNECT)
        handle = await client.create_session(PAY, seed=1, seats=["a"])
        agent = client.agent(handle.id, handle.tokens["a"])
        await agent.join()
        await agent.call(*steps[0])

        read, write = os.pipe()
        second = asyncio.create_task(
            start_serve(
                "--port", port, "--store", str(db), "--handover", stderr=write, cwd=tmp_path
            )
        )
        reader = asyncio.StreamReader()
        pipe = os.fdopen(read, "rb")
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        seen: list[bytes] = []

        async def until(event: bytes | None) -> None:
            while line := await reader.readline():
                seen.append(line)
                if event is not None and event in line:
                    return
            assert event is None, b"".join(seen).decode()

        await asyncio.wait_for(until(b'"store_in_use_waiting"'), TIMEOUT)
        assert not second.done()  # it waits; it has not bound the port the first one holds
        drain = asyncio.create_task(until(None))  # the rest, to the end
        assert await first.stop() == 0
        proc, address = await asyncio.wait_for(second, TIMEOUT)
        try:
            assert address.endswith(f":{port}")
            async with client:
                await agent.join(resume=True)
                for step in steps[1:]:
                    await agent.call(*step)
                grade = await client.get_grade(handle.id)
                await agent.close()
            assert grade["grade"]["resolved"] is True
        finally:
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), TIMEOUT) == 0
            os.close(write)
            await asyncio.wait_for(drain, TIMEOUT)
            transport.close()
    assert b'"session_recovered"' in b"".join(seen)
